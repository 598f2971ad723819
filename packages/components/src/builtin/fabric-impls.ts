import type { Event } from "@kb/des";
import { KbError } from "@kb/errors";
import { hbmTopologyParams, queueDepthParam } from "@kb/spec";
import * as z from "zod";
import { Component, type ComponentContext } from "../component.js";
import { defineComponent } from "../define.js";
import { defineMemoryModel, type MemoryModel, type MemoryRequest, type MemoryTiming } from "../memory.js";
import type { Message } from "../message.js";
import { Packet } from "../packet.js";

// The HBM params schema is defined in @kb/spec; re-exported here for the built-in HBM models
// that extend it from this file.
export { hbmTopologyParams };

/**
 * `queue_depth` of a forwarding hop: accepted so topologies that set it keep parsing, but a hop
 * serves packets on arrival (an unbounded FIFO), so it bounds nothing.
 */
const hopQueueDepthParam = () =>
  z
    .number()
    .int()
    .min(1)
    .default(8)
    .describe(
      "Not used: the hop serves packets on arrival as an unbounded FIFO (docs/latency-model.md section 4); accepted for older topologies.",
    );

const nonNegative = (description: string, value: number) =>
  z.number().min(0).default(value).describe(description);

/** Params of a forwarding component (the topology adds `first_flit_ns`). */
export const transitParams = z.strictObject({
  first_flit_ns: nonNegative("Per-hop overhead of a packet's first flit, in ns (set by the topology).", 1),
  queue_depth: hopQueueDepthParam(),
});

/** @internal */
export function notAPacket(component: Component, message: Message): KbError {
  return new KbError(
    "MACHINE_INVARIANT",
    `${component.kind} ${component.impl} received "${message.label}", which is not a fabric packet; only packets travel through forwarding components.`,
    { context: { nodeId: component.id, simTimeNs: component.env.now } },
  );
}

/**
 * A forwarding component: a FIFO server that spends `overheadNs` on each packet's first flit and
 * forwards it along its path.
 *
 * It serves a packet **on arrival**, without a worker: the packet's delivery event (at its head's
 * arrival) is the only engine event of the hop. Service starts at `max(arrival, freeAt)` and
 * ends `overheadNs` later, when the head leaves; the links after the hop are charged then, in
 * the same call. That is exactly what a serial worker would do: packets arrive in time order,
 * each waits for the ones before it, and the links leaving this node carry only packets this
 * hop forwarded, in the order it forwarded them, so charging them at arrival changes no start
 * time (docs/latency-model.md section 4). @internal
 */
export class Transit extends Component<{ queue_depth: number }> {
  /** Time until which the worker is promised to packets that arrived earlier, ns. */
  private freeAt = 0;
  private readonly track: string;

  constructor(
    context: ComponentContext,
    params: { queue_depth: number },
    private readonly overheadNs: number,
  ) {
    super(context, params, { queueDepth: params.queue_depth });
    this.track = this.id;
  }

  /** Serves `message` (a packet) at once and forwards it; never waits for room. */
  override enqueue(message: Message): null {
    if (!(message instanceof Packet)) throw notAPacket(this, message);
    const env = this.env;
    const now = env.now;
    const start = Math.max(this.freeAt, now);
    const end = start + this.overheadNs;
    this.freeAt = end;
    const stats = this.stats;
    this.addBusy(this.overheadNs);
    stats.ops++;
    stats.bytes += message.bytes;
    const tracer = this.machine.tracer;
    if (tracer !== null) {
      // Packets ahead of this one when it arrived, drawn where its service starts (one track, in time order).
      const ahead = this.overheadNs > 0 ? Math.ceil((start - now) / this.overheadNs) : 0;
      tracer.counter?.("queue depth", start, this.track, ahead);
      tracer.record("engine_start", start, this.track, message.label);
      tracer.record("engine_complete", end, this.track, message.label);
    }
    message.departNs = end;
    message.forward(this);
    return null;
  }

  process(message: Message): Event<unknown> | null {
    // Packets never reach the worker (enqueue serves them); anything put into the inbox directly is a mistake.
    throw notAPacket(this, message);
  }
}

/** The one forwarding impl, registered for NOC routers, XBAR halves, the bridge and UCIe ports. */
export const transitV1 = defineComponent({
  kind: "noc_router",
  alsoKinds: ["xbar", "bridge", "ucie_port"],
  impl: "transit_v1",
  analytic: true,
  description:
    "Forwarding hop (NOC router, XBAR half, bridge, UCIe port): a FIFO server pays first_flit_ns per packet on arrival, then the packet moves cut-through over the next links (bandwidth-shared, FIFO).",
  params: transitParams,
  create: (context, params) => new Transit(context, params, params.first_flit_ns),
});

/** M_CPU.DMA: forwards host <-> HBM traffic paying `forward_ns`. */
export const mCpuDmaV1 = defineComponent({
  kind: "m_cpu_dma",
  impl: "m_cpu_dma_v1",
  analytic: true,
  description:
    "The cube manager's DMA engine: carries host <-> HBM copies between IO_CPU and the XBAR, a FIFO server paying forward_ns per packet.",
  params: z.strictObject({
    forward_ns: nonNegative("Overhead per forwarded packet in ns (set by the topology).", 20),
    queue_depth: hopQueueDepthParam(),
  }),
  create: (context, params) => new Transit(context, params, params.forward_ns),
});

/** The busy state of one memory port (an HBM pseudo-channel, an SRAM). */
interface PortBus {
  /** Time until which the port's data bus is promised (ns). */
  busyUntil: number;
}

/**
 * The analytic port timing of `hbm_ctrl_v1` and `sram_v1`: a read streams its bytes from
 * `max(arrival + access, busyUntil)`; a write takes the bus from `max(arrival, busyUntil)` and
 * commits at `max(bus end, tail) + access`. Bus time is per flit: `ceil(bytes / flit) x flit /
 * bw`. The access latency overlaps earlier transfers.
 */
function analyticPorts(ports: number, bwGbs: number, flitBytes: number, accessNs: number): MemoryModel {
  const buses: PortBus[] = Array.from({ length: ports }, () => ({ busyUntil: 0 }));
  const nsPerByte = 1 / bwGbs;
  return {
    service(request: MemoryRequest): MemoryTiming {
      const bus = buses[request.port] as PortBus;
      const busNs = Math.ceil(request.bytes / flitBytes) * flitBytes * nsPerByte;
      if (request.kind === "read") {
        const startNs = Math.max(request.arrivalNs + accessNs, bus.busyUntil);
        bus.busyUntil = startNs + busNs;
        return { startNs, endNs: startNs + busNs, busyNs: busNs };
      }
      const startNs = Math.max(request.arrivalNs, bus.busyUntil);
      bus.busyUntil = startNs + busNs;
      return { startNs, endNs: Math.max(startNs + busNs, request.tailNs) + accessNs, busyNs: busNs };
    },
    peak: () => ({ bytesPerNs: ports * bwGbs }),
  };
}

export const hbmCtrlV1 = defineMemoryModel({
  kind: "hbm_ctrl",
  impl: "hbm_ctrl_v1",
  analytic: true,
  description:
    "HBM stack controller, analytic: each pseudo-channel has its own bus (pc_bw_gbs) and busy state, access latency overlapped with earlier transfers, data committed per flit; no banks or rows.",
  params: hbmTopologyParams,
  create: (context, params) =>
    analyticPorts(context.ports, params.pc_bw_gbs, params.flit_bytes, params.access_latency_ns),
});

const sramParams = z.strictObject({
  capacity_bytes: z.number().int().min(0).describe("Capacity in bytes (set by the topology)."),
  bw_gbs: z.number().positive().describe("Bandwidth in GB/s."),
  latency_ns: z.number().min(0).describe("Access latency in ns."),
  flit_bytes: z.number().int().min(1).default(64).describe("Access granularity in bytes."),
  queue_depth: queueDepthParam(16),
});

export const sramV1 = defineMemoryModel({
  kind: "sram",
  impl: "sram_v1",
  analytic: true,
  description:
    "Shared SRAM of a cube: one port of bw_gbs, latency_ns per access overlapped with earlier transfers.",
  params: sramParams,
  create: (_context, params) => analyticPorts(1, params.bw_gbs, params.flit_bytes, params.latency_ns),
});
