import type { Event } from "@kb/des";
import { KbError } from "@kb/errors";
import * as z from "zod";
import { Component, type ComponentContext } from "../component.js";
import { defineComponent } from "../define.js";
import { Packet } from "../fabric.js";
import { defineMemoryModel, type MemoryModel, type MemoryRequest, type MemoryTiming } from "../memory.js";
import type { Message } from "../message.js";

/** `queue_depth`: every built-in's inbox capacity per lane. */
export const queueDepthParam = (depth: number) =>
  z.number().int().min(1).default(depth).describe("Inbox capacity per lane: the hardware queue depth.");

const nonNegative = (description: string, value: number) =>
  z.number().min(0).default(value).describe(description);

/** Params of a forwarding component (the topology adds `first_flit_ns`). */
export const transitParams = z.strictObject({
  first_flit_ns: nonNegative("Per-hop overhead of a packet's first flit, in ns (set by the topology).", 1),
  queue_depth: queueDepthParam(8),
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
 * A forwarding component: one serial worker that spends `overheadNs` on each packet's first flit
 * and forwards it along its path. @internal
 */
export class Transit extends Component<{ queue_depth: number }> {
  constructor(
    context: ComponentContext,
    params: { queue_depth: number },
    private readonly overheadNs: number,
  ) {
    super(context, params, { queueDepth: params.queue_depth });
  }

  process(message: Message): Event<unknown> | null {
    if (!(message instanceof Packet)) throw notAPacket(this, message);
    this.stats.bytes += message.bytes;
    return this.overheadNs > 0 ? this.env.timeout(this.overheadNs) : null;
  }
}

/** The one forwarding impl, registered for NOC routers, XBAR halves, the bridge and UCIe ports. */
export const transitV1 = defineComponent({
  kind: "noc_router",
  alsoKinds: ["xbar", "bridge", "ucie_port"],
  impl: "transit_v1",
  analytic: true,
  description:
    "Forwarding hop (NOC router, XBAR half, bridge, UCIe port): a serial worker pays first_flit_ns per packet, then the packet moves cut-through over the next links (bandwidth-shared, FIFO).",
  params: transitParams,
  create: (context, params) => new Transit(context, params, params.first_flit_ns),
});

/** M_CPU.DMA: forwards host <-> HBM traffic paying `forward_ns`. */
export const mCpuDmaV1 = defineComponent({
  kind: "m_cpu_dma",
  impl: "m_cpu_dma_v1",
  analytic: true,
  description:
    "The cube manager's DMA engine: carries host <-> HBM copies between IO_CPU and the XBAR, a serial worker paying forward_ns per packet.",
  params: z.strictObject({
    forward_ns: nonNegative("Overhead per forwarded packet in ns (set by the topology).", 20),
    queue_depth: queueDepthParam(8),
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

/**
 * The params the topology gives every HBM controller node (`cube.hbm`): an HBM memory model's
 * schema extends this (`hbmTopologyParams.extend({ ... })`) so its strict parse accepts them.
 */
export const hbmTopologyParams = z.strictObject({
  channels: z.number().int().min(1).describe("Channels (set by the topology's cube.hbm)."),
  pseudo_channels: z.number().int().min(1).describe("Pseudo-channels per channel."),
  pc_bw_gbs: z.number().positive().describe("Bandwidth of one pseudo-channel, GB/s."),
  access_latency_ns: z.number().min(0).describe("Access latency of a pseudo-channel, ns."),
  interleave_bytes: z.number().int().min(1).describe("Address interleave unit (mapping: interleave), bytes."),
  flit_bytes: z.number().int().min(1).describe("Flit size: the bus commits a flit at a time."),
  capacity_bytes: z.number().int().min(1).describe("Stack capacity, bytes."),
  mapping: z.string().default("interleave").describe("Address mapping (cube.hbm.mapping)."),
  preset: z.enum(["hbm2", "hbm2e", "hbm3", "hbm3e"]).optional().describe("JEDEC part (cube.hbm.preset)."),
  sids: z.number().int().min(1).default(1).describe("SIDs per pseudo-channel."),
  bank_groups: z.number().int().min(1).default(4).describe("Bank groups per SID."),
  banks_per_group: z.number().int().min(1).default(4).describe("Banks per bank group."),
  row_bytes: z.number().int().min(1).default(1024).describe("Row (page) size, bytes."),
  burst_bytes: z.number().int().min(1).default(32).describe("Bytes per column access."),
  queue_depth: queueDepthParam(64),
});

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
