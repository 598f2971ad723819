/**
 * The measurements of `kb probe`: the traffic catalog (H2D, D2H, PE DMA cases), the utilisation
 * sweep and the GEMM cases, each run on a fresh machine and set against its formula.
 */

import type { ComponentRegistry, Machine } from "@kb/components";
import { gemmTimingOf, Transfer } from "@kb/components";
import { splitByPseudoChannel } from "@kb/components/engine";
import type { Event } from "@kb/des";
import type { GemmCommand } from "@kb/spec";
import { decodeAddress, type TopologyGraph, type TopologyNode, tcmAddress } from "@kb/topology";
import {
  blockOf,
  hbmTiming,
  peFixedNs,
  readFormula,
  singlePcLayout,
  type Target,
  target,
  writeFormula,
} from "./probe-formula.js";
import type {
  ProbeCase,
  ProbeGemmCase,
  ProbeLayout,
  ProbeNonAnalytic,
  ProbePlacement,
  ProbeSweepPoint,
} from "./probe-types.js";

// ---------------------------------------------------------------------------------------------
// Which impls time a case

/** The components timing a set of nodes whose impl does not declare `analytic: true`. */
export type NonAnalyticOf = (ids: Iterable<string>) => ProbeNonAnalytic[];

/**
 * {@link NonAnalyticOf} for `graph`'s impls in `registry`. A node without a component (an HBM
 * channel or pseudo-channel) is timed by its nearest ancestor that has one (the HBM controller);
 * the result is in the order of `ids`, each component once.
 */
export function nonAnalyticOf(graph: TopologyGraph, registry: ComponentRegistry): NonAnalyticOf {
  const timedBy = (id: string): TopologyNode | null => {
    for (let node: TopologyNode | null = graph.node(id); node !== null; ) {
      if (node.impl !== null) return node;
      node = node.parent === null ? null : graph.node(node.parent);
    }
    return null;
  };
  return (ids) => {
    const seen = new Set<string>();
    const found: ProbeNonAnalytic[] = [];
    for (const id of ids) {
      const node = graph.has(id) ? timedBy(id) : null;
      if (node === null || seen.has(node.id)) continue;
      seen.add(node.id);
      if (registry.resolve(node).analytic !== true) found.push({ id: node.id, impl: node.impl as string });
    }
    return found;
  };
}

/** The PE-side engines a `dma` command passes before its packets leave (PE_DMA is on the route). */
function peSide(pe: string): string[] {
  return [`${pe}.pe_cpu`, `${pe}.pe_scheduler`, `${pe}.pe_mmu`];
}

/** The nodes that time a transfer to or from `where`: the request route, and the response route of a read. */
function pathOf(where: Target, direction: "read" | "write"): string[] {
  return direction === "write" ? [...where.request.hops] : [...where.request.hops, ...where.response.hops];
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

/** A host write (`h2d`) or read (`d2h`) of one pseudo-channel, on a fresh machine. */
export function hostCase(
  graph: TopologyGraph,
  fresh: () => Machine,
  nonAnalytic: NonAnalyticOf,
  where: Target,
  bytes: number,
  direction: "read" | "write",
): ProbeCase {
  const layout = singlePcLayout(graph, where.pc, bytes);
  const machine = fresh();
  const timing = hbmTiming(machine, where.pc);
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
    nonAnalytic: nonAnalytic(pathOf(where, direction)),
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

/** A `dma` command on `pe` between HBM at `where` and its TCM, on a fresh machine. */
export function dmaCase(
  graph: TopologyGraph,
  fresh: () => Machine,
  nonAnalytic: NonAnalyticOf,
  pe: string,
  where: Target,
  placement: ProbePlacement,
  bytes: number,
  direction: "read" | "write",
): ProbeCase {
  const layout = singlePcLayout(graph, where.pc, bytes);
  const machine = fresh();
  const timing = hbmTiming(machine, where.pc);
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
    nonAnalytic: nonAnalytic([...peSide(pe), ...pathOf(where, direction)]),
  });
}

/** A contiguous read at the local PC: the interleave spreads it over the PCs. */
export function spreadCase(
  graph: TopologyGraph,
  fresh: () => Machine,
  nonAnalytic: NonAnalyticOf,
  pe: string,
  local: Target,
  bytes: number,
): ProbeCase {
  const spec = graph.topology.cube.hbm;
  const dma = `${pe}.pe_dma`;
  const first = singlePcLayout(graph, local.pc, Math.min(bytes, spec.interleave_bytes));
  const layout: ProbeLayout = { address: first.address, rows: 1, rowBytes: bytes, stride: bytes };
  const pcs = graph.hbmPseudoChannelsOfCube(local.pc.sip as number, local.pc.cube as number);
  const shares = splitByPseudoChannel(
    blockOf(layout),
    decodeAddress(layout.address).offset,
    graph.hbmAddressMap(),
  );
  const machine = fresh();
  let formulaNs = 0;
  const path = peSide(pe);
  for (const share of shares) {
    const where = target(graph, dma, pcs[share.lane] as TopologyNode);
    const timing = hbmTiming(machine, where.pc);
    formulaNs = Math.max(formulaNs, readFormula(where.request, where.response, share.bytes, timing));
    path.push(...pathOf(where, "read"));
  }
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
    nonAnalytic: nonAnalytic(path),
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

/** The utilisation sweep: at each of {@link sweepPoints}, the PEs nearest `pc` read it at once. */
export function runSweep(
  graph: TopologyGraph,
  fresh: () => Machine,
  nonAnalytic: NonAnalyticOf,
  pc: TopologyNode,
  bytes: number,
): ProbeSweepPoint[] {
  const layout = singlePcLayout(graph, pc, bytes);
  // The rate of the PC's controller, from a machine's model (every point builds its own).
  const timing = hbmTiming(fresh(), pc);
  const pes = graph
    .pesOfCube(pc.sip as number, pc.cube as number)
    .map((node, index) => {
      const where = target(graph, `${node.id}.pe_dma`, pc);
      const path = [...peSide(node.id), ...pathOf(where, "read")];
      return { node, index, path, formulaNs: readFormula(where.request, where.response, bytes, timing) };
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
      nonAnalytic: nonAnalytic(chosen.flatMap((entry) => entry.path)),
    };
  });
}

function mean(values: readonly number[]): number {
  return values.reduce((sum, value) => sum + value, 0) / values.length;
}

// ---------------------------------------------------------------------------------------------
// GEMM

/** The GEMM cases on `pe`'s PE_GEMM, each alone on a fresh machine. */
export function gemmCases(
  fresh: () => Machine,
  nonAnalytic: NonAnalyticOf,
  pe: TopologyNode,
): ProbeGemmCase[] {
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
    // The GEMM stage alone: the command also fetches its operands and stores its result (PE_TCM).
    const busyBefore = engine.stats.busyNs;
    completionTimes(machine, [machine.submit(pe.id, [command], "probe gemm")]);
    const measuredNs = engine.stats.busyNs - busyBefore;
    const cycles = timing === null ? null : timing.gemmCycles(m, n, k, "f16");
    const formulaNs = timing === null || cycles === null ? null : cycles / timing.freqGhz;
    return {
      name,
      engine: engine.id,
      impl: engine.impl,
      analytic: nonAnalytic([engine.id]).length === 0,
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
