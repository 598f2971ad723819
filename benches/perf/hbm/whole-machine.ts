// A trace through a whole machine: PE DMAs -> fabric (NOC, XBAR) -> HBM, with the same closed
// loop as the memory-only driver, and the latency split between the fabric and the memory.

import { defaultRegistry } from "@kb/builtins";
import { buildMachine, type KbPlugin, type MemoryComponent, type Packet, Transfer } from "@kb/components";
import { encodeAddress, type TopologyGraph } from "@kb/topology";
import { figuresOf, rowHitRateOf } from "./driver.js";
import type { Trace } from "./trace.js";

/** What a whole-machine run measured. */
export interface WholeMachineFigures {
  readonly requests: number;
  readonly reads: number;
  readonly writes: number;
  readonly outstanding: number;
  readonly tck_ns: number;
  readonly peak_gbs: number;
  /** At the requesters (data back at the PE_DMA). */
  readonly steady_gbs: number;
  readonly whole_gbs: number;
  readonly pct_peak: number;
  /** Read latency at the requester: issue to the last data back at the PE_DMA, ns. */
  readonly read_lat_mean_ns: number | null;
  readonly read_lat_p50_ns: number | null;
  readonly read_lat_p99_ns: number | null;
  /** Read latency at the memory: the first piece entering the memory's queue to the last data leaving it, ns. */
  readonly memory_lat_mean_ns: number | null;
  readonly memory_lat_p50_ns: number | null;
  readonly memory_lat_p99_ns: number | null;
  /** Share of the mean requester latency spent outside the memory (request and response paths). */
  readonly fabric_share: number | null;
  readonly row_hit_rate: number | null;
  readonly sim_ns: number;
  /** The PE_DMAs the requesters issue from. */
  readonly requesters: readonly string[];
  /** The busiest fabric component (not the memory): id and busy share of the run per lane. */
  readonly busiestComponent: { readonly id: string; readonly busy: number } | null;
  /** The busiest link: `src -> dst` and its bandwidth share of the run. */
  readonly busiestLink: { readonly id: string; readonly busy: number } | null;
}

/** How a line is seen at the memory: first arrival of a piece, last data out. */
interface AtMemory {
  first: number;
  last: number;
}

/**
 * Runs `trace` on a machine built from `graph`: requester r is a PE_DMA of cube 0 (the trace's
 * requesters spread evenly over its PEs), issuing each line as a 64 B `machine.fabric.read` (a
 * write: `fabric.write`, posted) with the closed loop of the memory-only driver (file order, at
 * most `window` reads outstanding, round-robin from tick mod R). The fabric takes every request
 * (its queues apply the backpressure), so there is no refusal at the requester. Latency is
 * measured at the requester (issue to data back) and at the memory (a piece entering the HBM
 * controller's queue to its last data leaving), from hooks on the memory component.
 */
export function runWholeMachine(
  trace: Trace,
  graph: TopologyGraph,
  options: { readonly tckNs: number; readonly plugins?: readonly KbPlugin[]; readonly memory?: string },
): WholeMachineFigures {
  const machine = buildMachine(graph, { registry: defaultRegistry(options.plugins ?? []) });
  const env = machine.env;
  const memoryId = options.memory ?? "sip0.cube0.hbm";
  const memory = machine.component<MemoryComponent>(memoryId);
  const pes = graph.pesOfCube(0, 0);
  const R = trace.requesters;
  const W = trace.window;
  const bytes = trace.lineBytes;
  const requesters = Array.from({ length: R }, (_, r) => {
    const pe = pes[Math.floor((r * pes.length) / R) % pes.length];
    if (pe === undefined) throw new Error(`topology ${graph.topology.name} has no PE in sip0.cube0`);
    return `${pe.id}.pe_dma`;
  });

  // Hooks: when a line's pieces enter the memory, when their data leaves it.
  const seen = new Map<Transfer, AtMemory>();
  const enqueue = memory.enqueue.bind(memory);
  memory.enqueue = (message) => {
    const transfer = (message as Packet).transfer;
    if (transfer !== null && transfer !== undefined) {
      const entry = seen.get(transfer);
      if (entry === undefined) seen.set(transfer, { first: env.now, last: env.now });
      else if (env.now < entry.first) entry.first = env.now;
    }
    return enqueue(message);
  };
  const answered = memory.answered.bind(memory);
  memory.answered = (request, timing) => {
    const transfer = (request as unknown as { packet: Packet }).packet.transfer;
    if (transfer !== null) {
      const entry = seen.get(transfer);
      if (entry !== undefined && timing.endNs > entry.last) entry.last = timing.endNs;
    }
    answered(request, timing);
  };

  const tck = options.tckNs;
  const next = new Int32Array(R);
  const outstanding = new Int32Array(R);
  const completions = new Float64Array(trace.requests);
  const latencies = new Float64Array(trace.reads);
  const atMemory = new Float64Array(trace.reads);
  let completed = 0;
  let readsDone = 0;
  let issued = 0;
  const hbm = (offset: number) => ({
    address: encodeAddress({ sip: 0, cube: 0, space: "hbm", offset }),
    rows: 1,
    rowBytes: bytes,
    stride: bytes,
  });

  let t = Math.max(0, Math.ceil(env.now / tck));
  if (t * tck > env.now) env.run(t * tck);
  for (;;) {
    const now = env.now;
    for (let k = 0; k < R; k++) {
      const r = (t + k) % R;
      const addresses = trace.addresses[r] as Float64Array;
      const writes = trace.writes[r] as Uint8Array;
      let j = next[r] as number;
      while (j < addresses.length && (outstanding[r] as number) < W) {
        const transfer = new Transfer(env);
        const block = hbm(addresses[j] as number);
        if (writes[j] === 1) {
          machine.fabric.write(requesters[r] as string, block, transfer);
          transfer.seal();
          completions[completed++] = now;
        } else {
          machine.fabric.read(requesters[r] as string, block, transfer);
          transfer.seal();
          outstanding[r] = (outstanding[r] as number) + 1;
          const start = now;
          const who = r;
          transfer.done.addCallback(() => {
            const entry = seen.get(transfer);
            atMemory[readsDone] = entry === undefined ? 0 : entry.last - entry.first;
            seen.delete(transfer);
            latencies[readsDone++] = transfer.doneAt - start;
            completions[completed++] = transfer.doneAt;
            outstanding[who] = (outstanding[who] as number) - 1;
          });
        }
        j++;
        issued++;
      }
      next[r] = j;
    }
    if (issued === trace.requests && readsDone === trace.reads) break;
    const upcoming = env.peek();
    if (upcoming === Number.POSITIVE_INFINITY) {
      throw new Error(
        `the machine has no event left at ${now} ns with ${trace.reads - readsDone} read(s) unanswered.`,
      );
    }
    const following = Math.max(t + 1, Math.floor(upcoming / tck) + 1);
    env.run(following * tck);
    t = following;
  }
  const hbmSpec = graph.topology.cube.hbm;
  const peak = hbmSpec.channels * hbmSpec.pseudo_channels * hbmSpec.pc_bw_gbs;
  const figures = figuresOf(completions, latencies, bytes, peak);
  const memoryFigures = figuresOf(completions, atMemory, bytes, peak);
  const span = figures.sim_ns > 0 ? figures.sim_ns : 1;
  let busiestComponent: WholeMachineFigures["busiestComponent"] = null;
  for (const component of machine.components) {
    if (component === memory || component.stats.ops === 0) continue;
    const busy = component.stats.busyNs / (span * component.lanes.length);
    if (busiestComponent === null || busy > busiestComponent.busy)
      busiestComponent = { id: component.id, busy };
  }
  let busiestLink: WholeMachineFigures["busiestLink"] = null;
  for (const link of machine.fabric.usedLinks()) {
    const busy = link.busyNs / span;
    if (busiestLink === null || busy > busiestLink.busy)
      busiestLink = { id: `${link.edge.src} -> ${link.edge.dst}`, busy };
  }
  const requesterMean = figures.read_lat_mean_ns;
  const memoryMean = memoryFigures.read_lat_mean_ns;
  return {
    requests: trace.requests,
    reads: trace.reads,
    writes: trace.requests - trace.reads,
    outstanding: R * W,
    tck_ns: tck,
    peak_gbs: peak,
    steady_gbs: figures.steady_gbs,
    whole_gbs: figures.whole_gbs,
    pct_peak: figures.pct_peak,
    read_lat_mean_ns: requesterMean,
    read_lat_p50_ns: figures.read_lat_p50_ns,
    read_lat_p99_ns: figures.read_lat_p99_ns,
    memory_lat_mean_ns: memoryMean,
    memory_lat_p50_ns: memoryFigures.read_lat_p50_ns,
    memory_lat_p99_ns: memoryFigures.read_lat_p99_ns,
    fabric_share:
      requesterMean === null || memoryMean === null || requesterMean === 0
        ? null
        : (requesterMean - memoryMean) / requesterMean,
    row_hit_rate: rowHitRateOf(memory.model, memory.ports),
    sim_ns: figures.sim_ns,
    requesters,
    busiestComponent,
    busiestLink,
  };
}
