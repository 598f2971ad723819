import { defaultRegistry } from "@kb/builtins";
import type { ComponentRegistry, KbPlugin } from "@kb/components";
import { buildMachine, type HbmStackPeak, hbmStackPeaks, type Machine } from "@kb/components";
import { KbError } from "@kb/errors";
import { expandTopology, type Topology, type TopologyGraph } from "@kb/topology";
import { dmaCase, gemmCases, hostCase, nonAnalyticOf, runSweep, spreadCase } from "./probe-catalog.js";
import { dmaPlacements, nearest, target } from "./probe-formula.js";
import { checkInvariants } from "./probe-invariants.js";
import {
  PROBE_BYTES,
  type ProbeCase,
  type ProbeGemmCase,
  type ProbeInvariant,
  type ProbeSweepPoint,
} from "./probe-types.js";

export { sweepPoints } from "./probe-catalog.js";
export { fabricRoute } from "./probe-formula.js";
export type {
  ProbeCase,
  ProbeGemmCase,
  ProbeInvariant,
  ProbeLayout,
  ProbePlacement,
  ProbeSweepPoint,
} from "./probe-types.js";
export { PROBE_BYTES, PROBE_UNCONTENDED_TOLERANCE } from "./probe-types.js";

/** Options of {@link runProbe}. */
export interface ProbeOptions {
  /** The impls to build the machines with (default: the built-ins plus `plugins`). */
  readonly registry?: ComponentRegistry;
  /** Plug-ins to register on the default registry (already imported). */
  readonly plugins?: readonly KbPlugin[];
  /** Bytes per transfer (default {@link PROBE_BYTES}, 32 KiB). */
  readonly bytes?: number;
}

/** What {@link runProbe} returns; deterministic for a topology and a registry. */
export interface ProbeReport {
  /** The topology's name. */
  readonly topology: string;
  readonly bytes: number;
  /** The PE the DMA cases run on (the first PE of sip0.cube0). */
  readonly requester: string;
  readonly cases: readonly ProbeCase[];
  readonly sweep: readonly ProbeSweepPoint[];
  /** GEMMs on the requester's PE_GEMM against its impl's formula. */
  readonly gemm: readonly ProbeGemmCase[];
  readonly invariants: readonly ProbeInvariant[];
  /** No invariant failed. */
  readonly pass: boolean;
  /**
   * The HBM stack of the requester's cube and its peak, from its model's own `peak()` (the
   * number `kb topology show` and the run results' `peak.hbmBytesPerS` use).
   */
  readonly hbmPeak: HbmStackPeak;
  /**
   * The topology's `cube.hbm.mapping` when it is not `interleave`: the probe then places its
   * blocks with `interleave` (so each per-PC case is one pseudo-channel); a mapping decides which
   * PC holds an address, not how a PC is timed. Absent for `interleave`.
   */
  readonly mappingReplaced?: string;
}

/**
 * Runs the probe catalog on `graph` (DESIGN §2: the formula against the simulation), each case on
 * a fresh machine, then checks the invariants.
 *
 * **Cases** (PE = the first PE of sip0.cube0, B = `options.bytes`, 32 KiB by default):
 * `h2d` / `d2h` (host write / read of the pseudo-channel of sip0.cube0 nearest the host),
 * `dma-read-*` / `dma-write-*` (a `dma` command submitted to the PE, HBM <-> its TCM) at four
 * placements: `local` (the nearest PC on a channel of the PE's own XBAR half), `bridge` (the
 * nearest PC on the other half), `ucie` (the nearest PC of the first cube linked to the PE's by
 * UCIe), `far` (the PC with the most hops from the PE, then the highest formula latency); a
 * placement the topology lacks is left out. Then `dma-read-spread`: a contiguous block at the
 * local PC, which the interleave spreads over the PCs.
 *
 * **One pseudo-channel per case.** A contiguous block larger than `interleave_bytes` is split
 * over several PCs whose packets share the requester's links (contention within the transfer),
 * so every case except `spread` moves B bytes as rows of at most `interleave_bytes` placed one
 * interleave stripe (`channels x pseudo_channels x interleave_bytes`) apart: all rows land in
 * one PC, the fabric sends one packet over one route, and its time has a closed form.
 *
 * **Formula** (docs/latency-model.md §2-3), with routes as the fabric takes them (PE_DMA's NOC
 * egress for anything but its own cube's HBM; their narrowest link leaves out the PC's own bus) and
 * `bus = ceil(B / flit_bytes) x flit_bytes / rate`, `rate` the PC's controller's own `peak()` /
 * its ports (`pc_bw_gbs` for hbm_ctrl_v1, `burst_bytes / tBL` for hbm_ctrl_v2):
 * - write: `max(idealTransferNs(route, B), route.latencyNs + bus) + access_latency_ns` (complete
 *   when committed);
 * - read: `idealTransferNs(request, 0) + access_latency_ns + max(idealTransferNs(response, B),
 *   response.latencyNs + bus)`;
 * (the `max` is the flit rounding; it is `idealTransferNs` whenever B is a multiple of
 * `flit_bytes`). For `spread`, the largest formula over the PCs touched of that PC's bytes: a
 * lower bound, since the packets share links. PE cases measure from submit to completion less
 * the PE-side fixed time (see {@link ProbeCase.fixedNs}).
 *
 * **Sweep**: up to five points from 1 PE to every PE of sip0.cube0 ({@link sweepPoints}), each
 * point on a fresh machine: the PEs nearest the local PC (lowest formula first) all submit a read
 * of the same B bytes of that PC at once.
 *
 * **GEMM**: three `gemm` commands on TCM operands (f16: the PE_SCHEDULER's composite tile,
 * 32 x 32 x 32, and one row of the tile, 1 x tile_n x tile_k), each alone on a fresh machine,
 * measured from submit to completion less `dispatch_ns`, against the PE_GEMM impl's own formula
 * (`gemmCycles / freqGhz` of its {@link GemmTiming}; none for an impl that does not state one).
 *
 * **Invariants**: measured >= formula for every case and sweep transfer; every uncontended case
 * (and the one-PE sweep point) within 1% of its formula; sweep mean and max latency
 * non-decreasing in the number of PEs; D2H >= H2D when the formulas say so (skipped otherwise);
 * best placement (local) faster than worst (far), read and write; every GEMM never faster than
 * its impl's formula and within 1% of it (skipped when the impl states no formula).
 *
 * Throws what {@link buildMachine} throws (unknown impls, bad params), `DES_DEADLOCK` when a
 * transfer never completes (a broken impl), `MACHINE_INVALID_COMMAND` when `bytes` is not a
 * positive integer or does not fit the HBM stack, or sip0.cube0 has no PE.
 */
export function runProbe(topologyGraph: TopologyGraph, options: ProbeOptions = {}): ProbeReport {
  const mapping = topologyGraph.topology.cube.hbm.mapping;
  const graph =
    mapping === "interleave"
      ? topologyGraph
      : expandTopology(withMapping(topologyGraph.topology, "interleave"));
  const bytes = options.bytes ?? PROBE_BYTES;
  if (!Number.isInteger(bytes) || bytes < 1) {
    throw new KbError("MACHINE_INVALID_COMMAND", `probe: bytes must be an integer >= 1, got ${bytes}.`);
  }
  const registry = options.registry ?? defaultRegistry(options.plugins ?? []);
  const fresh = (): Machine => buildMachine(graph, { registry });
  const peNode = graph.pesOfCube(0, 0)[0];
  if (peNode === undefined) {
    throw new KbError(
      "MACHINE_INVALID_COMMAND",
      `probe: topology "${graph.topology.name}" has no PE in sip0.cube0.`,
    );
  }
  const pe = peNode.id;
  const dma = `${pe}.pe_dma`;
  const nonAnalytic = nonAnalyticOf(graph, registry);

  const cases: ProbeCase[] = [];
  const host = nearest(graph.hbmPseudoChannelsOfCube(0, 0).map((pc) => target(graph, "host", pc)));
  if (host !== undefined) {
    cases.push(hostCase(graph, fresh, nonAnalytic, host, bytes, "write"));
    cases.push(hostCase(graph, fresh, nonAnalytic, host, bytes, "read"));
  }
  const placements = dmaPlacements(graph, dma);
  for (const direction of ["read", "write"] as const) {
    for (const [placement, where] of placements) {
      cases.push(dmaCase(graph, fresh, nonAnalytic, pe, where, placement, bytes, direction));
    }
  }
  const local = placements.get("local") ?? placements.values().next().value;
  if (local !== undefined) cases.push(spreadCase(graph, fresh, nonAnalytic, pe, local, bytes));

  const sweep = local === undefined ? [] : runSweep(graph, fresh, nonAnalytic, local.pc, bytes);
  const gemm = gemmCases(fresh, nonAnalytic, peNode);
  const hbmId = `sip${peNode.sip}.cube${peNode.cube}.hbm`;
  const hbmPeak = hbmStackPeaks(fresh()).find((stack) => stack.id === hbmId) as HbmStackPeak;
  const invariants = checkInvariants(cases, sweep, gemm);
  return {
    topology: graph.topology.name,
    bytes,
    requester: pe,
    cases,
    sweep,
    gemm,
    invariants,
    pass: invariants.every((invariant) => invariant.status !== "fail"),
    hbmPeak,
    ...(mapping === "interleave" ? {} : { mappingReplaced: mapping }),
  };
}

function withMapping(topology: Topology, mapping: string): Topology {
  return { ...topology, cube: { ...topology.cube, hbm: { ...topology.cube.hbm, mapping } } };
}
