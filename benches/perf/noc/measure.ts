// One point of `pnpm bench:noc`: synthetic traffic at one offered rate through startTraffic, the
// public traffic generator of @kb/components, and the figures of the shared README.
import { defaultRegistry } from "@kb/builtins";
import {
  buildMachine,
  type KbPlugin,
  startTraffic,
  type TrafficPacket,
  trafficPattern,
} from "@kb/components";
import type { TopologyGraph } from "@kb/topology";
import { CYCLE_NS, endpointsOf, FLIT_BYTES, type MeshSize } from "./mesh.js";

/** What one point runs: a pattern, a packet size, a rate and the windows (cycles). */
export interface PointSpec {
  readonly traffic: string;
  readonly packetFlits: number;
  readonly offered: number;
  readonly warmupCycles: number;
  readonly measureCycles: number;
  readonly seed: number;
}

/** The measured figures of a point (cycles and flits/node/cycle), plus the engine's work. */
export interface PointFigures {
  readonly accepted: number;
  readonly packet_latency: number;
  readonly network_latency: number;
  readonly flit_latency: number;
  /** Sampled packets still in flight when the drain stopped (counted with their age). */
  readonly unfinished: number;
  /** Engine events per packet created, and packets delivered per CPU second. */
  readonly eventsPerPacket: number;
  readonly packetsPerSecond: number;
}

/**
 * Cycles the run goes on after the measurement window for its sample to arrive: past that, a
 * sampled packet still in flight counts with its age so far (a lower bound, on a point that is
 * saturated by then: its latency exceeds 3 x zero-load).
 */
export const DRAIN_CYCLES = 5000;

/**
 * Runs one point: Bernoulli injection of P-flit packets (probability offered / P per node per
 * cycle), warm-up, then the sample (packets created in the measurement window) followed until it
 * has arrived, sources injecting meanwhile.
 */
export function measurePoint(
  graph: TopologyGraph,
  size: MeshSize,
  spec: PointSpec,
  plugins: readonly KbPlugin[] = [],
): PointFigures {
  const machine = buildMachine(graph, { registry: defaultRegistry(plugins) });
  const nodes = size.rows * size.cols;
  const P = spec.packetFlits;
  const from = spec.warmupCycles * CYCLE_NS;
  const to = from + spec.measureCycles * CYCLE_NS;
  let sampled = 0;
  let arrivedSampled = 0;
  let packetSum = 0;
  let networkSum = 0;
  let flitSum = 0;
  let flitPackets = 0;
  let acceptedFlits = 0;
  /** Sums of the creation times of the sample and of its packets that arrived. */
  let sampledCreatedSum = 0;
  let arrivedCreatedSum = 0;
  const delivered = (packet: TrafficPacket) => {
    if (packet.arrivedNs >= from && packet.arrivedNs < to) acceptedFlits += P;
    if (packet.injectedNs >= from) {
      flitSum += packet.arrivedNs - packet.injectedNs - (P - 1) * CYCLE_NS;
      flitPackets++;
    }
    if (packet.createdNs < from || packet.createdNs >= to) return;
    arrivedSampled++;
    arrivedCreatedSum += packet.createdNs;
    packetSum += packet.arrivedNs - packet.createdNs;
    networkSum += packet.arrivedNs - packet.injectedNs;
  };
  const pattern = trafficPattern(spec.traffic, size.cols, size.rows);
  const cpu = process.cpuUsage();
  const events = machine.env.processedEventCount;
  const run = startTraffic(machine, {
    endpoints: endpointsOf(size),
    destination: (source, random) => {
      const now = machine.env.now;
      if (now >= from && now < to) {
        sampled++;
        sampledCreatedSum += now;
      }
      return pattern(source, random);
    },
    packetBytes: P * FLIT_BYTES,
    packetsPerCycle: spec.offered / P,
    cycleNs: CYCLE_NS,
    seed: spec.seed,
    delivered,
  });
  machine.run(to);
  const limit = to + DRAIN_CYCLES * CYCLE_NS;
  while (arrivedSampled < sampled && machine.env.now < limit) {
    machine.run(Math.min(limit, machine.env.now + 250 * CYCLE_NS));
  }
  run.stop();
  const unfinished = sampled - arrivedSampled;
  // Packets still in flight count with their age at the end (a lower bound).
  const ageSum = unfinished * machine.env.now - (sampledCreatedSum - arrivedCreatedSum);
  const used = process.cpuUsage(cpu);
  const seconds = (used.user + used.system) / 1e6;
  const count = Math.max(1, sampled);
  return {
    accepted: acceptedFlits / (nodes * spec.measureCycles),
    packet_latency: (packetSum + ageSum) / count / CYCLE_NS,
    network_latency: (networkSum + ageSum) / count / CYCLE_NS,
    flit_latency: flitPackets === 0 ? 0 : flitSum / flitPackets / CYCLE_NS,
    unfinished,
    eventsPerPacket: (machine.env.processedEventCount - events) / Math.max(1, run.created),
    packetsPerSecond: run.delivered / Math.max(seconds, 1e-9),
  };
}
