import type { Event } from "@kb/des";
import { KbError } from "@kb/errors";
import {
  decodeAddress,
  encodeAddress,
  idealTransferNs,
  type Route,
  type TopologyGraph,
  type TopologyNode,
} from "@kb/topology";
import type { GemmCommand } from "./commands.js";
import type { KbPlugin } from "./define.js";
import { splitByPseudoChannel, Transfer } from "./fabric.js";
import { gemmTimingOf } from "./gemm-timing.js";
import { buildMachine, defaultRegistry, type Machine, tcmAddress } from "./machine.js";
import type { MemoryBlock } from "./message.js";
import type { ComponentRegistry } from "./registry.js";

/** The reference size of every probe transfer: 32 KiB. */
export const PROBE_BYTES = 32768;

/** Slack (ns) allowed when comparing times, for floating-point sums only. */
const EPSILON_NS = 1e-6;

/** How far an uncontended transfer may be from its formula: 1%. */
export const PROBE_UNCONTENDED_TOLERANCE = 0.01;

/** Options of {@link runProbe}. */
export interface ProbeOptions {
  /** The impls to build the machines with (default: the built-ins plus `plugins`). */
  readonly registry?: ComponentRegistry;
  /** Plug-ins to register on the default registry (already imported). */
  readonly plugins?: readonly KbPlugin[];
  /** Bytes per transfer (default {@link PROBE_BYTES}, 32 KiB). */
  readonly bytes?: number;
}

/** Where a probe transfer's memory is, seen from the requester. */
export type ProbePlacement = "host" | "local" | "bridge" | "ucie" | "far" | "spread";

/** The layout of a probe transfer in HBM (one 2-D block, see {@link runProbe}). */
export interface ProbeLayout {
  /** Device address of the first byte. */
  readonly address: number;
  readonly rows: number;
  readonly rowBytes: number;
  /** Bytes between row starts (`rowBytes` when `rows` is 1). */
  readonly stride: number;
}

/** One case of the catalog, measured on its own fresh machine. */
export interface ProbeCase {
  /** `h2d`, `d2h`, `dma-read-local`, ..., `dma-read-spread`. */
  readonly name: string;
  /** `h2d` (host write), `d2h` (host read), `dma_read` (HBM -> TCM), `dma_write` (TCM -> HBM). */
  readonly kind: "h2d" | "d2h" | "dma_read" | "dma_write";
  readonly placement: ProbePlacement;
  /** `host` or the PE id (`sip0.cube0.pe0`). */
  readonly requester: string;
  /** The pseudo-channel node the block sits in (the first one, for `spread`). */
  readonly memory: string;
  /** The route the data takes (node ids): the response route of a read, the route of a write. */
  readonly route: readonly string[];
  /** Links on that route. */
  readonly hops: number;
  readonly bytes: number;
  /** Pseudo-channels the block touches (1 except for `spread`). */
  readonly pcs: number;
  readonly layout: ProbeLayout;
  /**
   * PE-side fixed time before the first packet leaves (0 for host copies): the PE_CPU's
   * `dispatch_ns` + the PE_MMU's `miss_ns` per page the block touches (a fresh TLB) + the
   * PE_DMA's `setup_ns`, from the nodes' params. Subtracted from the submit-to-completion time.
   */
  readonly fixedNs: number;
  /** The model's uncontended time of the transfer (see {@link runProbe}), ns. */
  readonly formulaNs: number;
  /** Simulated time from the start of the transfer to its completion, less `fixedNs`. */
  readonly measuredNs: number;
  /** `measuredNs / formulaNs`. */
  readonly ratio: number;
  /** Whether nothing shares the transfer's links and memory, so measured must be within 1% of formula. */
  readonly uncontended: boolean;
}

/** One point of the utilisation sweep: `pes` PEs read at once from the same pseudo-channel. */
export interface ProbeSweepPoint {
  readonly pes: number;
  /** The PEs, nearest (lowest formula) first. */
  readonly peIds: readonly string[];
  /** The pseudo-channel they all read. */
  readonly memory: string;
  /** Per PE, in `peIds` order: its uncontended read formula (its own route to the PC), ns. */
  readonly formulasNs: readonly number[];
  /** Mean of `formulasNs`. */
  readonly formulaNs: number;
  /** Per PE, in `peIds` order: submit to completion less its fixed PE-side time, ns. */
  readonly latenciesNs: readonly number[];
  readonly meanNs: number;
  readonly maxNs: number;
  /** `meanNs / formulaNs`. */
  readonly ratio: number;
  /** `pes x bytes / maxNs`: the bandwidth the PEs got together, GB/s. */
  readonly gbs: number;
}

/**
 * One GEMM on the probe PE's PE_GEMM, alone on a fresh machine, against the impl's own formula
 * (its {@link GemmTiming}), so a plug-in engine is held to what it states.
 */
export interface ProbeGemmCase {
  /** `gemm-tile` (the PE_SCHEDULER's composite tile), `gemm-small` (32 x 32 x 32), `gemm-vector` (1 x tile_n x tile_k). */
  readonly name: string;
  /** The PE_GEMM component (`sip0.cube0.pe0.pe_gemm`). */
  readonly engine: string;
  readonly impl: string;
  readonly m: number;
  readonly n: number;
  readonly k: number;
  readonly dtype: "f16";
  /** The impl's cycles for it (`gemmCycles`); null when the impl states no {@link GemmTiming}. */
  readonly cycles: number | null;
  /** `cycles / freqGhz`, ns; null likewise. */
  readonly formulaNs: number | null;
  /** A `gemm` command on TCM operands from submit to completion, less the PE_CPU's `dispatch_ns`. */
  readonly measuredNs: number;
  /** `measuredNs / formulaNs`; null likewise. */
  readonly ratio: number | null;
  /** The MAC array's utilisation on it, `m n k / (cycles x macRows x macCols)`; null likewise. */
  readonly utilisation: number | null;
}

/** The result of one invariant check. */
export interface ProbeInvariant {
  /** Stable id: `measured_ge_formula`, `uncontended_within_1pct`, `monotonic_in_utilisation`, `d2h_ge_h2d`, `best_lt_worst_placement`, `gemm_matches_formula`. */
  readonly id: string;
  /** What is checked, in words. */
  readonly title: string;
  /** `skip` when the topology makes the check meaningless (says why in `detail`). */
  readonly status: "pass" | "fail" | "skip";
  /** The numbers behind the verdict. */
  readonly detail: string;
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
}

/** The timing params of a cube's HBM controller (its node's params). */
interface HbmTiming {
  readonly accessNs: number;
  readonly flitBytes: number;
  readonly pcBwGbs: number;
}

/** A placement: a pseudo-channel and its route from the requester. */
interface Target {
  readonly pc: TopologyNode;
  readonly request: Route;
  readonly response: Route;
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
 * egress for anything but its own cube's HBM) and `bus = ceil(B / flit_bytes) x flit_bytes /
 * pc_bw_gbs` of the PC's controller:
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
export function runProbe(graph: TopologyGraph, options: ProbeOptions = {}): ProbeReport {
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

  const cases: ProbeCase[] = [];
  const host = nearest(graph.hbmPseudoChannelsOfCube(0, 0).map((pc) => target(graph, "host", pc)));
  if (host !== undefined) {
    cases.push(hostCase(graph, fresh, host, bytes, "write"));
    cases.push(hostCase(graph, fresh, host, bytes, "read"));
  }
  const placements = dmaPlacements(graph, dma);
  for (const direction of ["read", "write"] as const) {
    for (const [placement, where] of placements) {
      cases.push(dmaCase(graph, fresh, pe, where, placement, bytes, direction));
    }
  }
  const local = placements.get("local") ?? placements.values().next().value;
  if (local !== undefined) cases.push(spreadCase(graph, fresh, pe, local, bytes));

  const sweep = local === undefined ? [] : runSweep(graph, fresh, local.pc, bytes);
  const gemm = gemmCases(fresh, peNode);
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
  };
}

// ---------------------------------------------------------------------------------------------
// Routes and placements

/**
 * The route the fabric takes between `src` and `dst` (docs/latency-model.md §2): the topology's
 * best route, except that a PE_DMA reaches anything but its own cube's HBM through its own NOC
 * router (ADR-0014 D1), paying that router's `first_flit_ns`.
 */
export function fabricRoute(graph: TopologyGraph, src: string, dst: string): Route {
  const router = nocEgress(graph, src, dst) ?? nocEgress(graph, dst, src);
  if (router === null) return graph.route(src, dst);
  const a = graph.route(src, router);
  const b = graph.route(router, dst);
  return {
    src,
    dst,
    hops: [...a.hops, ...b.hops.slice(1)],
    links: [...a.links, ...b.links],
    latencyNs: a.latencyNs + Number(graph.node(router).params.first_flit_ns ?? 0) + b.latencyNs,
    minBwGbs: Math.min(a.minBwGbs, b.minBwGbs),
  };
}

function nocEgress(graph: TopologyGraph, dma: string, other: string): string | null {
  const node = graph.node(dma);
  if (node.kind !== "pe_dma" || node.coords === null) return null;
  const far = graph.node(other);
  if (far.kind === "hbm_pc" && far.sip === node.sip && far.cube === node.cube) return null;
  return `sip${node.sip}.cube${node.cube}.noc.r${node.coords.row}c${node.coords.col}`;
}

function target(graph: TopologyGraph, requester: string, pc: TopologyNode): Target {
  return {
    pc,
    request: fabricRoute(graph, requester, pc.id),
    response: fabricRoute(graph, pc.id, requester),
  };
}

/** Least request latency, then fewest hops, then graph order. */
function nearest(targets: readonly Target[]): Target | undefined {
  let best: Target | undefined;
  for (const candidate of targets) {
    if (
      best === undefined ||
      candidate.request.latencyNs < best.request.latencyNs ||
      (candidate.request.latencyNs === best.request.latencyNs &&
        candidate.request.links.length < best.request.links.length)
    ) {
      best = candidate;
    }
  }
  return best;
}

/** Most hops, then the highest request latency, then graph order. */
function farthest(targets: readonly Target[]): Target | undefined {
  let best: Target | undefined;
  for (const candidate of targets) {
    const hops = candidate.request.links.length;
    if (
      best === undefined ||
      hops > best.request.links.length ||
      (hops === best.request.links.length && candidate.request.latencyNs > best.request.latencyNs)
    ) {
      best = candidate;
    }
  }
  return best;
}

/** The DMA placements the topology has, in catalog order. */
function dmaPlacements(graph: TopologyGraph, dma: string): Map<ProbePlacement, Target> {
  const node = graph.node(dma);
  const sip = node.sip as number;
  const cube = node.cube as number;
  const placements = new Map<ProbePlacement, Target>();
  const own = graph.hbmPseudoChannelsOfCube(sip, cube);
  const xbar = graph.outEdges(dma).find((edge) => graph.node(edge.dst).kind === "xbar")?.dst;
  if (xbar !== undefined) {
    const half = new Set(
      graph
        .outEdges(xbar)
        .map((edge) => edge.dst)
        .filter((id) => graph.node(id).kind === "hbm_channel"),
    );
    const local = nearest(
      own.filter((pc) => half.has(pc.parent as string)).map((pc) => target(graph, dma, pc)),
    );
    const other = nearest(
      own.filter((pc) => !half.has(pc.parent as string)).map((pc) => target(graph, dma, pc)),
    );
    if (local !== undefined) placements.set("local", local);
    if (other !== undefined) placements.set("bridge", other);
  }
  const peers = graph
    .children(`sip${sip}.cube${cube}`)
    .filter((child) => child.kind === "ucie_port")
    .flatMap((port) => graph.outEdges(port.id).map((edge) => graph.node(edge.dst)))
    .filter((peer) => peer.kind === "ucie_port" && (peer.sip !== sip || peer.cube !== cube))
    .sort((a, b) => (a.sip as number) - (b.sip as number) || (a.cube as number) - (b.cube as number));
  const peer = peers[0];
  if (peer !== undefined) {
    const ucie = nearest(
      graph
        .hbmPseudoChannelsOfCube(peer.sip as number, peer.cube as number)
        .map((pc) => target(graph, dma, pc)),
    );
    if (ucie !== undefined) placements.set("ucie", ucie);
  }
  const everything: Target[] = [];
  for (const pc of graph.byKind("hbm_pc")) everything.push(target(graph, dma, pc));
  const far = farthest(everything);
  if (far !== undefined) placements.set("far", far);
  return placements;
}

// ---------------------------------------------------------------------------------------------
// Blocks and formulas

function hbmTiming(graph: TopologyGraph, pc: TopologyNode): HbmTiming {
  const spec = graph.topology.cube.hbm;
  const params = graph.node(`sip${pc.sip}.cube${pc.cube}.hbm`).params;
  const number = (value: unknown, fallback: number): number => (typeof value === "number" ? value : fallback);
  return {
    accessNs: number(params.access_latency_ns, spec.access_latency_ns),
    flitBytes: number(params.flit_bytes, spec.flit_bytes),
    pcBwGbs: number(params.pc_bw_gbs, spec.pc_bw_gbs),
  };
}

/** Channel and pseudo-channel indices of a PC node (`....hbm.ch{h}.pc{q}`). */
function pcIndices(pc: TopologyNode): { channel: number; pseudoChannel: number } {
  const match = /\.ch(\d+)\.pc(\d+)$/.exec(pc.id);
  if (match === null)
    throw new KbError("MACHINE_INVARIANT", `probe: ${pc.id} is not named like an HBM pseudo-channel.`);
  return { channel: Number(match[1]), pseudoChannel: Number(match[2]) };
}

/**
 * `bytes` in one pseudo-channel: rows of the largest divisor of `bytes` that fits in an
 * interleave unit, one stripe apart, starting at the PC's first unit.
 */
function singlePcLayout(graph: TopologyGraph, pc: TopologyNode, bytes: number): ProbeLayout {
  const {
    channels,
    pseudo_channels: pseudoChannels,
    interleave_bytes: interleave,
    capacity_bytes: capacity,
  } = graph.topology.cube.hbm;
  const { channel, pseudoChannel } = pcIndices(pc);
  const offset = (channel + pseudoChannel * channels) * interleave;
  let rowBytes = Math.min(bytes, interleave);
  while (bytes % rowBytes !== 0) rowBytes--;
  const rows = bytes / rowBytes;
  const stride = rows === 1 ? rowBytes : channels * pseudoChannels * interleave;
  const span = (rows - 1) * stride + rowBytes;
  if (offset + span > capacity) {
    throw new KbError(
      "MACHINE_INVALID_COMMAND",
      `probe: ${bytes} B in one pseudo-channel span ${span} B of HBM from offset ${offset}, past cube.hbm.capacity_bytes ${capacity}; probe a smaller size.`,
    );
  }
  const address = encodeAddress({ sip: pc.sip as number, cube: pc.cube as number, space: "hbm", offset });
  return { address, rows, rowBytes, stride };
}

function busNs(timing: HbmTiming, bytes: number): number {
  return (Math.ceil(bytes / timing.flitBytes) * timing.flitBytes) / timing.pcBwGbs;
}

/** Uncontended write of `bytes` to one PC: complete when committed. */
function writeFormula(route: Route, bytes: number, timing: HbmTiming): number {
  return Math.max(idealTransferNs(route, bytes), route.latencyNs + busNs(timing, bytes)) + timing.accessNs;
}

/** Uncontended read of `bytes` from one PC: request, access, response. */
function readFormula(request: Route, response: Route, bytes: number, timing: HbmTiming): number {
  return (
    idealTransferNs(request, 0) +
    timing.accessNs +
    Math.max(idealTransferNs(response, bytes), response.latencyNs + busNs(timing, bytes))
  );
}

function blockOf(layout: ProbeLayout): MemoryBlock {
  return { address: layout.address, rows: layout.rows, rowBytes: layout.rowBytes, stride: layout.stride };
}

/**
 * The PE-side time before a DMA's packets leave: PE_CPU dispatch, PE_MMU misses (a fresh TLB: one
 * per page the block touches), PE_DMA setup; from the built components' params (defaults filled
 * in), 0 for a param an impl does not have.
 */
function peFixedNs(machine: Machine, pe: string, layout: ProbeLayout): number {
  const param = (component: string, name: string): number => {
    const value = (machine.component(`${pe}.${component}`).params as Record<string, unknown>)[name];
    return typeof value === "number" ? value : 0;
  };
  const pageBytes = param("pe_mmu", "page_bytes");
  const span = (layout.rows - 1) * layout.stride + layout.rowBytes;
  const pages =
    pageBytes > 0
      ? Math.floor((layout.address + span - 1) / pageBytes) - Math.floor(layout.address / pageBytes) + 1
      : 1;
  return param("pe_cpu", "dispatch_ns") + pages * param("pe_mmu", "miss_ns") + param("pe_dma", "setup_ns");
}

// ---------------------------------------------------------------------------------------------
// Cases

/** Runs `machine` until `events` complete; returns each one's completion time. */
function completionTimes(machine: Machine, events: readonly Event<unknown>[]): number[] {
  const times = events.map(() => Number.NaN);
  events.forEach((event, index) => {
    event.addCallback(() => {
      times[index] = machine.env.now;
    });
  });
  machine.run(events.length === 1 ? (events[0] as Event<unknown>) : machine.env.allOf(events));
  return times;
}

function hostCase(
  graph: TopologyGraph,
  fresh: () => Machine,
  where: Target,
  bytes: number,
  direction: "read" | "write",
): ProbeCase {
  const layout = singlePcLayout(graph, where.pc, bytes);
  const timing = hbmTiming(graph, where.pc);
  const machine = fresh();
  const start = machine.env.now;
  // What Machine.hostWrite / hostRead do, with a block that stays in one pseudo-channel.
  const transfer = new Transfer(machine.env);
  if (direction === "write") machine.fabric.write("host", blockOf(layout), transfer, "probe h2d");
  else machine.fabric.read("host", blockOf(layout), transfer, "probe d2h");
  transfer.seal();
  const [end] = completionTimes(machine, [transfer.done]);
  const route = direction === "write" ? where.request : where.response;
  const formulaNs =
    direction === "write"
      ? writeFormula(where.request, bytes, timing)
      : readFormula(where.request, where.response, bytes, timing);
  return finish({
    name: direction === "write" ? "h2d" : "d2h",
    kind: direction === "write" ? "h2d" : "d2h",
    placement: "host",
    requester: "host",
    memory: where.pc.id,
    route: route.hops,
    hops: route.links.length,
    bytes,
    pcs: 1,
    layout,
    fixedNs: 0,
    formulaNs,
    measuredNs: (end as number) - start,
    uncontended: true,
  });
}

function dmaCommand(pe: TopologyNode, layout: ProbeLayout, direction: "read" | "write") {
  const tcm = tcmAddress(pe.sip as number, pe.cube as number, pe.pe as number, 0);
  return direction === "read"
    ? {
        kind: "dma" as const,
        src: layout.address,
        dst: tcm,
        bytes: layout.rowBytes,
        rows: layout.rows,
        srcStride: layout.stride,
        dstStride: layout.rowBytes,
      }
    : {
        kind: "dma" as const,
        src: tcm,
        dst: layout.address,
        bytes: layout.rowBytes,
        rows: layout.rows,
        srcStride: layout.rowBytes,
        dstStride: layout.stride,
      };
}

function dmaCase(
  graph: TopologyGraph,
  fresh: () => Machine,
  pe: string,
  where: Target,
  placement: ProbePlacement,
  bytes: number,
  direction: "read" | "write",
): ProbeCase {
  const layout = singlePcLayout(graph, where.pc, bytes);
  const timing = hbmTiming(graph, where.pc);
  const machine = fresh();
  const start = machine.env.now;
  const [end] = completionTimes(machine, [
    machine.submit(pe, [dmaCommand(graph.node(pe), layout, direction)], "probe"),
  ]);
  const fixedNs = peFixedNs(machine, pe, layout);
  const route = direction === "write" ? where.request : where.response;
  return finish({
    name: `dma-${direction}-${placement}`,
    kind: direction === "read" ? "dma_read" : "dma_write",
    placement,
    requester: pe,
    memory: where.pc.id,
    route: route.hops,
    hops: route.links.length,
    bytes,
    pcs: 1,
    layout,
    fixedNs,
    formulaNs:
      direction === "write"
        ? writeFormula(where.request, bytes, timing)
        : readFormula(where.request, where.response, bytes, timing),
    measuredNs: (end as number) - start - fixedNs,
    uncontended: true,
  });
}

/** A contiguous read at the local PC: the interleave spreads it over the PCs. */
function spreadCase(
  graph: TopologyGraph,
  fresh: () => Machine,
  pe: string,
  local: Target,
  bytes: number,
): ProbeCase {
  const spec = graph.topology.cube.hbm;
  const dma = `${pe}.pe_dma`;
  const first = singlePcLayout(graph, local.pc, Math.min(bytes, spec.interleave_bytes));
  const layout: ProbeLayout = { address: first.address, rows: 1, rowBytes: bytes, stride: bytes };
  const pcs = graph.hbmPseudoChannelsOfCube(local.pc.sip as number, local.pc.cube as number);
  const shares = splitByPseudoChannel(blockOf(layout), decodeAddress(layout.address).offset, {
    channels: spec.channels,
    pseudoChannels: spec.pseudo_channels,
    interleave: spec.interleave_bytes,
    capacity: spec.capacity_bytes,
  });
  let formulaNs = 0;
  for (const share of shares) {
    const where = target(graph, dma, pcs[share.lane] as TopologyNode);
    const timing = hbmTiming(graph, where.pc);
    formulaNs = Math.max(formulaNs, readFormula(where.request, where.response, share.bytes, timing));
  }
  const machine = fresh();
  const start = machine.env.now;
  const [end] = completionTimes(machine, [
    machine.submit(pe, [dmaCommand(graph.node(pe), layout, "read")], "probe"),
  ]);
  const fixedNs = peFixedNs(machine, pe, layout);
  return finish({
    name: "dma-read-spread",
    kind: "dma_read",
    placement: "spread",
    requester: pe,
    memory: local.pc.id,
    route: local.response.hops,
    hops: local.response.links.length,
    bytes,
    pcs: shares.length,
    layout,
    fixedNs,
    formulaNs,
    measuredNs: (end as number) - start - fixedNs,
    uncontended: shares.length === 1,
  });
}

function finish(partial: Omit<ProbeCase, "ratio">): ProbeCase {
  return { ...partial, ratio: partial.measuredNs / partial.formulaNs };
}

// ---------------------------------------------------------------------------------------------
// Utilisation sweep

/**
 * The PE counts of the utilisation sweep for a cube of `n` PEs: `round(n^(i/4))` for i = 0..4,
 * duplicates dropped, so at most five points from 1 to n (1, 2, 4, 8, 16 for 16; 1, 2, 3, 5, 8 for 8).
 */
export function sweepPoints(n: number): number[] {
  const points = new Set<number>();
  for (let step = 0; step <= 4; step++) points.add(Math.max(1, Math.round(n ** (step / 4))));
  return [...points].sort((a, b) => a - b);
}

function runSweep(
  graph: TopologyGraph,
  fresh: () => Machine,
  pc: TopologyNode,
  bytes: number,
): ProbeSweepPoint[] {
  const layout = singlePcLayout(graph, pc, bytes);
  const timing = hbmTiming(graph, pc);
  const pes = graph
    .pesOfCube(pc.sip as number, pc.cube as number)
    .map((node, index) => {
      const where = target(graph, `${node.id}.pe_dma`, pc);
      return { node, index, formulaNs: readFormula(where.request, where.response, bytes, timing) };
    })
    .sort((a, b) => a.formulaNs - b.formulaNs || a.index - b.index);
  return sweepPoints(pes.length).map((count) => {
    const chosen = pes.slice(0, count);
    const machine = fresh();
    const start = machine.env.now;
    const events = chosen.map(({ node }) =>
      machine.submit(node.id, [dmaCommand(node, layout, "read")], "probe sweep"),
    );
    const ends = completionTimes(machine, events);
    const latenciesNs = chosen.map(
      ({ node }, index) => (ends[index] as number) - start - peFixedNs(machine, node.id, layout),
    );
    const formulasNs = chosen.map((entry) => entry.formulaNs);
    const formulaNs = mean(formulasNs);
    const meanNs = mean(latenciesNs);
    const maxNs = Math.max(...latenciesNs);
    return {
      pes: count,
      peIds: chosen.map(({ node }) => node.id),
      memory: pc.id,
      formulasNs,
      formulaNs,
      latenciesNs,
      meanNs,
      maxNs,
      ratio: meanNs / formulaNs,
      gbs: (count * bytes) / maxNs,
    };
  });
}

function mean(values: readonly number[]): number {
  return values.reduce((sum, value) => sum + value, 0) / values.length;
}

// ---------------------------------------------------------------------------------------------
// GEMM

function gemmCases(fresh: () => Machine, pe: TopologyNode): ProbeGemmCase[] {
  const shapes = (machine: Machine): [string, number, number, number][] => {
    const scheduler = machine.component(`${pe.id}.pe_scheduler`).params as Record<string, unknown>;
    const tile = (name: string): number => (typeof scheduler[name] === "number" ? scheduler[name] : 128);
    const [m, n, k] = [tile("tile_m"), tile("tile_n"), tile("tile_k")];
    return [
      ["gemm-tile", m, n, k],
      ["gemm-small", 32, 32, 32],
      ["gemm-vector", 1, n, k],
    ];
  };
  return shapes(fresh()).map(([name, m, n, k]) => {
    const machine = fresh();
    const engine = machine.component(`${pe.id}.pe_gemm`);
    const timing = gemmTimingOf(engine);
    const dispatch = (machine.component(`${pe.id}.pe_cpu`).params as Record<string, unknown>).dispatch_ns;
    const tcm = (offset: number) => tcmAddress(pe.sip as number, pe.cube as number, pe.pe as number, offset);
    const command: GemmCommand = {
      kind: "gemm",
      a: tcm(0),
      b: tcm(m * k * 2),
      out: tcm(m * k * 2 + k * n * 2),
      m,
      n,
      k,
      dtype: "f16",
    };
    const start = machine.env.now;
    const [end] = completionTimes(machine, [machine.submit(pe.id, [command], "probe gemm")]);
    const measuredNs = (end as number) - start - (typeof dispatch === "number" ? dispatch : 0);
    const cycles = timing === null ? null : timing.gemmCycles(m, n, k, "f16");
    const formulaNs = timing === null || cycles === null ? null : cycles / timing.freqGhz;
    return {
      name,
      engine: engine.id,
      impl: engine.impl,
      m,
      n,
      k,
      dtype: "f16",
      cycles,
      formulaNs,
      measuredNs,
      ratio: formulaNs === null ? null : measuredNs / formulaNs,
      utilisation:
        timing === null || cycles === null ? null : (m * n * k) / (cycles * timing.macRows * timing.macCols),
    };
  });
}

// ---------------------------------------------------------------------------------------------
// Invariants

/** `1322.06 ns`; a float residue such as -1e-13 prints as 0.00, not -0.00. */
const ns = (value: number): string => `${(Math.abs(value) < 0.005 ? 0 : value).toFixed(2)} ns`;

function checkInvariants(
  cases: readonly ProbeCase[],
  sweep: readonly ProbeSweepPoint[],
  gemm: readonly ProbeGemmCase[],
): ProbeInvariant[] {
  return [
    measuredAtLeastFormula(cases, sweep),
    uncontendedWithinTolerance(cases, sweep),
    monotonicInUtilisation(sweep),
    d2hAtLeastH2d(cases),
    bestBeforeWorst(cases),
    gemmMatchesFormula(gemm),
  ];
}

function measuredAtLeastFormula(
  cases: readonly ProbeCase[],
  sweep: readonly ProbeSweepPoint[],
): ProbeInvariant {
  const checks: { what: string; measured: number; formula: number }[] = cases.map((entry) => ({
    what: entry.name,
    measured: entry.measuredNs,
    formula: entry.formulaNs,
  }));
  for (const point of sweep) {
    point.latenciesNs.forEach((latency, index) => {
      checks.push({
        what: `sweep ${point.pes} PE(s) ${point.peIds[index]}`,
        measured: latency,
        formula: point.formulasNs[index] as number,
      });
    });
  }
  const failures = checks.filter((check) => check.measured < check.formula - EPSILON_NS);
  let tightest = checks[0];
  for (const check of checks) {
    if (tightest === undefined || check.measured - check.formula < tightest.measured - tightest.formula)
      tightest = check;
  }
  const title = "measured >= formula for every transfer";
  if (tightest === undefined)
    return { id: "measured_ge_formula", title, status: "skip", detail: "no transfers" };
  if (failures.length > 0) {
    return {
      id: "measured_ge_formula",
      title,
      status: "fail",
      detail: `${failures.length} of ${checks.length} faster than the formula: ${failures
        .slice(0, 4)
        .map((check) => `${check.what} measured ${ns(check.measured)} < formula ${ns(check.formula)}`)
        .join("; ")}${failures.length > 4 ? "; ..." : ""}`,
    };
  }
  return {
    id: "measured_ge_formula",
    title,
    status: "pass",
    detail: `${checks.length} transfers; tightest ${tightest.what}: measured ${ns(tightest.measured)} - formula ${ns(tightest.formula)} = ${ns(tightest.measured - tightest.formula)}`,
  };
}

function uncontendedWithinTolerance(
  cases: readonly ProbeCase[],
  sweep: readonly ProbeSweepPoint[],
): ProbeInvariant {
  const checks = cases
    .filter((entry) => entry.uncontended)
    .map((entry) => ({ what: entry.name, measured: entry.measuredNs, formula: entry.formulaNs }));
  const single = sweep.find((point) => point.pes === 1);
  if (single !== undefined) {
    checks.push({
      what: "sweep 1 PE",
      measured: single.latenciesNs[0] as number,
      formula: single.formulasNs[0] as number,
    });
  }
  const id = "uncontended_within_1pct";
  const title = `uncontended measured within ${PROBE_UNCONTENDED_TOLERANCE * 100}% of formula`;
  const deviation = (check: { measured: number; formula: number }): number =>
    Math.abs(check.measured / check.formula - 1);
  let worst = checks[0];
  for (const check of checks) if (worst === undefined || deviation(check) > deviation(worst)) worst = check;
  if (worst === undefined) return { id, title, status: "skip", detail: "no uncontended transfers" };
  const percent = (check: { measured: number; formula: number }): string =>
    `${((check.measured / check.formula - 1) * 100).toFixed(3)}%`;
  const failures = checks.filter((check) => deviation(check) > PROBE_UNCONTENDED_TOLERANCE);
  if (failures.length > 0) {
    return {
      id,
      title,
      status: "fail",
      detail: `${failures.length} of ${checks.length} off by more than ${PROBE_UNCONTENDED_TOLERANCE * 100}%: ${failures
        .slice(0, 4)
        .map(
          (check) =>
            `${check.what} measured ${ns(check.measured)} vs formula ${ns(check.formula)} (${percent(check)})`,
        )
        .join("; ")}${failures.length > 4 ? "; ..." : ""}`,
    };
  }
  return {
    id,
    title,
    status: "pass",
    detail: `${checks.length} transfers; largest deviation ${worst.what}: ${percent(worst)} (measured ${ns(worst.measured)}, formula ${ns(worst.formula)})`,
  };
}

function monotonicInUtilisation(sweep: readonly ProbeSweepPoint[]): ProbeInvariant {
  const id = "monotonic_in_utilisation";
  const title = "latency non-decreasing in the number of PEs (sweep mean and max)";
  if (sweep.length < 2) {
    return { id, title, status: "skip", detail: `${sweep.length} sweep point(s): nothing to compare` };
  }
  const broken: string[] = [];
  for (let i = 1; i < sweep.length; i++) {
    const before = sweep[i - 1] as ProbeSweepPoint;
    const after = sweep[i] as ProbeSweepPoint;
    if (after.meanNs < before.meanNs - EPSILON_NS) {
      broken.push(`mean ${ns(after.meanNs)} at ${after.pes} PEs < ${ns(before.meanNs)} at ${before.pes}`);
    }
    if (after.maxNs < before.maxNs - EPSILON_NS) {
      broken.push(`max ${ns(after.maxNs)} at ${after.pes} PEs < ${ns(before.maxNs)} at ${before.pes}`);
    }
  }
  const series = (pick: (point: ProbeSweepPoint) => number): string =>
    sweep.map((point) => pick(point).toFixed(2)).join(" <= ");
  if (broken.length > 0) return { id, title, status: "fail", detail: broken.join("; ") };
  return {
    id,
    title,
    status: "pass",
    detail: `PEs ${sweep.map((point) => point.pes).join(", ")}: mean ${series((point) => point.meanNs)} ns; max ${series((point) => point.maxNs)} ns`,
  };
}

function d2hAtLeastH2d(cases: readonly ProbeCase[]): ProbeInvariant {
  const id = "d2h_ge_h2d";
  const title = "D2H >= H2D where the formulas say so";
  const h2d = cases.find((entry) => entry.name === "h2d");
  const d2h = cases.find((entry) => entry.name === "d2h");
  if (h2d === undefined || d2h === undefined) return { id, title, status: "skip", detail: "no host copies" };
  const formulas = `formulas: D2H ${ns(d2h.formulaNs)} (request + access + response), H2D ${ns(h2d.formulaNs)} (to commit)`;
  if (d2h.formulaNs < h2d.formulaNs - EPSILON_NS) {
    return { id, title, status: "skip", detail: `the topology makes D2H faster: ${formulas}` };
  }
  const holds = d2h.measuredNs >= h2d.measuredNs - EPSILON_NS;
  return {
    id,
    title,
    status: holds ? "pass" : "fail",
    detail: `D2H measured ${ns(d2h.measuredNs)} ${holds ? ">=" : "<"} H2D measured ${ns(h2d.measuredNs)}; ${formulas}`,
  };
}

function bestBeforeWorst(cases: readonly ProbeCase[]): ProbeInvariant {
  const id = "best_lt_worst_placement";
  const title = "best-case placement (local) faster than worst-case (far)";
  const parts: string[] = [];
  let failed = false;
  for (const direction of ["read", "write"] as const) {
    const best = cases.find((entry) => entry.name === `dma-${direction}-local`);
    const worst = cases.find((entry) => entry.name === `dma-${direction}-far`);
    if (best === undefined || worst === undefined || best.memory === worst.memory) continue;
    const holds = best.measuredNs < worst.measuredNs;
    if (!holds) failed = true;
    parts.push(
      `${direction}: local ${ns(best.measuredNs)} ${holds ? "<" : ">="} far ${ns(worst.measuredNs)}`,
    );
  }
  if (parts.length === 0) {
    return { id, title, status: "skip", detail: "the topology has no separate local and far placement" };
  }
  return { id, title, status: failed ? "fail" : "pass", detail: parts.join("; ") };
}

function gemmMatchesFormula(gemm: readonly ProbeGemmCase[]): ProbeInvariant {
  const id = "gemm_matches_formula";
  const title = `a lone GEMM takes its PE_GEMM impl's own formula (never less, within ${PROBE_UNCONTENDED_TOLERANCE * 100}%)`;
  const first = gemm[0];
  if (first === undefined) return { id, title, status: "skip", detail: "no GEMM cases" };
  const stated = gemm.filter((entry) => entry.formulaNs !== null);
  if (stated.length === 0) {
    return {
      id,
      title,
      status: "skip",
      detail: `${first.impl} states no formula (GemmTiming of @kb/components): measured ${gemm.map((entry) => `${entry.name} ${ns(entry.measuredNs)}`).join(", ")}`,
    };
  }
  const describe = (entry: ProbeGemmCase): string =>
    `${entry.name} ${entry.m}x${entry.n}x${entry.k} measured ${ns(entry.measuredNs)} vs formula ${ns(entry.formulaNs as number)}`;
  const failures = stated.filter((entry) => {
    const formula = entry.formulaNs as number;
    return (
      entry.measuredNs < formula - EPSILON_NS ||
      Math.abs(entry.measuredNs / formula - 1) > PROBE_UNCONTENDED_TOLERANCE
    );
  });
  if (failures.length > 0) {
    return {
      id,
      title,
      status: "fail",
      detail: `${failures.length} of ${stated.length} on ${first.impl}: ${failures.map(describe).join("; ")}`,
    };
  }
  return {
    id,
    title,
    status: "pass",
    detail: `${stated.length} GEMMs on ${first.impl}: ${stated
      .map(
        (entry) =>
          `${entry.name} ${entry.m}x${entry.n}x${entry.k} ${ns(entry.measuredNs)} (array utilisation ${((entry.utilisation as number) * 100).toFixed(1)}%)`,
      )
      .join(", ")}`,
  };
}
