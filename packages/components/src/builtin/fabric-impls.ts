import type { Event } from "@kb/des";
import { KbError } from "@kb/errors";
import * as z from "zod";
import { Component, type ComponentContext, type ComponentPeak } from "../component.js";
import { defineComponent } from "../define.js";
import { Packet } from "../fabric.js";
import type { Message } from "../message.js";
import type { Tracer } from "../trace.js";

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

/** The busy state of one memory port (an HBM pseudo-channel, an SRAM). @internal */
export interface MemoryPort {
  /** Time until which the port's data bus is promised (ns). */
  busyUntil: number;
  /** Bus ns charged. */
  busyNs: number;
}

/**
 * Services a packet that reached a memory port: a read request streams `returnBytes` back from
 * `max(now + access, busyUntil)`; a write commits its last flit at `max(bus end, tail) + access`.
 * Bus time is per flit: `ceil(bytes / flit) x flit x nsPerByte`. @internal
 */
export function serviceMemory(
  now: number,
  packet: Packet,
  port: MemoryPort,
  nsPerByte: number,
  flitBytes: number,
  accessNs: number,
): number {
  const bytes = packet.response !== null ? packet.returnBytes : packet.bytes;
  const bus = Math.ceil(bytes / flitBytes) * flitBytes * nsPerByte;
  if (packet.response !== null) {
    const start = Math.max(now + accessNs, port.busyUntil);
    port.busyUntil = start + bus;
    port.busyNs += bus;
    packet.becomeResponse(start, start + bus);
  } else {
    const start = Math.max(now, port.busyUntil);
    port.busyUntil = start + bus;
    port.busyNs += bus;
    const committed = Math.max(start + bus, packet.tailNs) + accessNs;
    (packet.transfer as NonNullable<Packet["transfer"]>).packetDone(committed);
  }
  return bytes;
}

const hbmParams = z.strictObject({
  channels: z.number().int().min(1).describe("Channels (set by the topology's cube.hbm)."),
  pseudo_channels: z.number().int().min(1).describe("Pseudo-channels per channel."),
  pc_bw_gbs: z.number().positive().describe("Bandwidth of one pseudo-channel, GB/s."),
  access_latency_ns: z.number().min(0).describe("Access latency of a pseudo-channel, ns."),
  interleave_bytes: z.number().int().min(1).describe("Address interleave granularity, bytes."),
  flit_bytes: z.number().int().min(1).describe("Flit size: the bus commits a flit at a time."),
  capacity_bytes: z.number().int().min(1).describe("Stack capacity, bytes."),
  queue_depth: queueDepthParam(64),
});

/** The window of the HBM bandwidth trace counter, ns. */
const BANDWIDTH_WINDOW_NS = 1000;

/** The HBM controller: one lane per pseudo-channel, each with its own bus state. @internal */
export class HbmCtrlV1 extends Component<z.output<typeof hbmParams>> {
  readonly ports: MemoryPort[];
  private readonly nsPerByte: number;

  constructor(context: ComponentContext, params: z.output<typeof hbmParams>) {
    const lanes = params.channels * params.pseudo_channels;
    super(context, params, { lanes, queueDepth: params.queue_depth, countProcessTime: false });
    this.ports = Array.from({ length: lanes }, () => ({ busyUntil: 0, busyNs: 0 }));
    this.nsPerByte = 1 / params.pc_bw_gbs;
  }

  override laneOf(message: Message): number {
    return (message as Packet).here.lane;
  }

  /** Bus intervals each pseudo-channel carried data in lately, for the trace counter. */
  private windows: { start: number; end: number }[][] | null = null;

  /**
   * Traces the pseudo-channel's bandwidth over the last {@link BANDWIDTH_WINDOW_NS} (GB/s): the
   * bus time spent carrying data in the window (up to now; a reservation ahead of now counts when
   * it happens) times `pc_bw_gbs`, so it never exceeds the bus.
   */
  private traceBandwidth(tracer: Tracer, lane: number, start: number, end: number): void {
    if (this.windows === null) this.windows = this.ports.map(() => []);
    const window = this.windows[lane] as { start: number; end: number }[];
    const now = this.env.now;
    if (end > start) window.push({ start, end });
    const from = now - BANDWIDTH_WINDOW_NS;
    while (window.length > 0 && (window[0] as { end: number }).end < from) window.shift();
    let busy = 0;
    for (const entry of window) busy += Math.max(0, Math.min(entry.end, now) - Math.max(entry.start, from));
    tracer.counter?.(
      "HBM GB/s",
      now,
      `${this.id}#${lane}`,
      (busy / BANDWIDTH_WINDOW_NS) * this.params.pc_bw_gbs,
    );
  }

  /** Every pseudo-channel's bus at once. */
  override peak(): ComponentPeak {
    return { bytesPerNs: this.ports.length * this.params.pc_bw_gbs };
  }

  process(message: Message, lane: number): null {
    if (!(message instanceof Packet)) throw notAPacket(this, message);
    const port = this.ports[lane] as MemoryPort;
    const before = port.busyNs;
    this.stats.bytes += serviceMemory(
      this.env.now,
      message,
      port,
      this.nsPerByte,
      this.params.flit_bytes,
      this.params.access_latency_ns,
    );
    this.stats.busyNs += port.busyNs - before;
    const tracer = this.machine.tracer;
    if (tracer?.counter !== undefined) {
      this.traceBandwidth(tracer, lane, port.busyUntil - (port.busyNs - before), port.busyUntil);
    }
    return null;
  }
}

export const hbmCtrlV1 = defineComponent({
  kind: "hbm_ctrl",
  impl: "hbm_ctrl_v1",
  analytic: true,
  description:
    "HBM stack controller: addresses interleave over channels then pseudo-channels; each PC has its own bus (pc_bw_gbs) and busy state, access latency overlapped with earlier transfers, data committed per flit.",
  params: hbmParams,
  create: (context, params) => new HbmCtrlV1(context, params),
});

const sramParams = z.strictObject({
  capacity_bytes: z.number().int().min(0).describe("Capacity in bytes (set by the topology)."),
  bw_gbs: z.number().positive().describe("Bandwidth in GB/s."),
  latency_ns: z.number().min(0).describe("Access latency in ns."),
  flit_bytes: z.number().int().min(1).default(64).describe("Access granularity in bytes."),
  queue_depth: queueDepthParam(16),
});

/** Shared SRAM: one port with a bus of `bw_gbs`. @internal */
export class SramV1 extends Component<z.output<typeof sramParams>> {
  readonly port: MemoryPort = { busyUntil: 0, busyNs: 0 };

  constructor(context: ComponentContext, params: z.output<typeof sramParams>) {
    super(context, params, { queueDepth: params.queue_depth, countProcessTime: false });
  }

  process(message: Message): null {
    if (!(message instanceof Packet)) throw notAPacket(this, message);
    const before = this.port.busyNs;
    this.stats.bytes += serviceMemory(
      this.env.now,
      message,
      this.port,
      1 / this.params.bw_gbs,
      this.params.flit_bytes,
      this.params.latency_ns,
    );
    this.stats.busyNs += this.port.busyNs - before;
    return null;
  }
}

export const sramV1 = defineComponent({
  kind: "sram",
  impl: "sram_v1",
  analytic: true,
  description:
    "Shared SRAM of a cube: one port of bw_gbs, latency_ns per access overlapped with earlier transfers.",
  params: sramParams,
  create: (context, params) => new SramV1(context, params),
});
