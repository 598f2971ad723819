import {
  defineForwardingModel,
  type Event,
  type ForwardingModel,
  type ForwardingModelContext,
  forwardingTopologyParams,
  type HopPacket,
  type HopPart,
  type ModelStat,
} from "@kb/components";
import * as z from "zod";
import { PORT_HOP_COUNTERS, VcRouter } from "./vc-router.js";

/**
 * Params of `port_hop_v1`: the topology's `first_flit_ns` (the pipeline latency a head crosses)
 * and the rate of each port. By default a port runs at the bandwidth of the link it serves, in
 * 64 B flits (`port_rate: link`; the reference topologies' mesh links are 128 GB/s: a flit per
 * 0.5 ns, `cycle_ns`'s default); BookSim 2's reference router is `flit_bytes: 16, cycle_ns: 1,
 * vcs: 2` with `cube.noc.first_flit_ns: 4`.
 */
export const portHopParams = forwardingTopologyParams.extend({
  flit_bytes: z
    .number()
    .int()
    .min(1)
    .default(64)
    .describe("Flit size, bytes (a 0-byte request is one head flit)."),
  cycle_ns: z.number().positive().default(0.5).describe("Clock period of the ports, ns."),
  port_rate: z
    .enum(["link", "cycle"])
    .default("link")
    .describe(
      "The service rate of each port: link (the default: the bandwidth of the link the port serves, whole flits of flit_bytes; a 256 GB/s link's port moves 256 GB/s) or cycle (port_flits_per_cycle flits per cycle_ns on every port, whatever its link). Virtual channels (vcs > 0) always move one flit per cycle.",
    ),
  port_flits_per_cycle: z
    .number()
    .positive()
    .default(1)
    .describe("Flits each input and each output port moves per cycle (port_rate: cycle only)."),
  buffer_flits: z
    .number()
    .int()
    .min(0)
    .default(0)
    .describe(
      "Input buffer per input port, flits; 0 (the default): unbounded. With a bound, credit-based flow control: a packet leaves the hop upstream only when min(flits, buffer_flits) of room is free on its input here, and its room is freed when its tail has left.",
    ),
  vcs: z
    .number()
    .int()
    .min(0)
    .max(16)
    .default(0)
    .describe(
      "Virtual channels per input port; 0 (the default): one FIFO per input, decided per packet on arrival. With vcs > 0, BookSim 2's input-queued VC router cycle by cycle: route, VC and switch allocation one cycle each (one-iteration iSLIP, round robin; the switch allocated flit by flit, so packets on different VCs interleave between VC routers), the rest of first_flit_ns to cross, credits per VC of vc_buffer_flits (buffer_flits is then unused).",
    ),
  vc_buffer_flits: z
    .number()
    .int()
    .min(1)
    .default(8)
    .describe("Buffer of each virtual channel, flits (vcs > 0 only); BookSim 2's vc_buf_size."),
});

const [PORT_WAIT, CREDIT_STALLS] = PORT_HOP_COUNTERS;

/** The parsed params of `port_hop_v1`. */
export type PortHopParams = z.output<typeof portHopParams>;

/**
 * Pipeline latency apart from occupancy (docs/latency-model.md section 4): a packet of F flits
 * holds its input port `i` for `F x flitNs_in[i]` and its output port `o` for `F x flitNs_out[o]`
 * (a flit's time on the port: `flit_bytes / link GB/s` with `port_rate: link`, `cycle_ns /
 * port_flits_per_cycle` with `cycle`); its head leaves at `max(arrival + first_flit_ns, input
 * free, output free)`, and each port is free again when the packet's flits have crossed it.
 * Packets on one input leave in arrival order (one FIFO per input: a head waiting for its output
 * blocks the packets behind it); each output serves heads first come, first served. Ports of
 * different packets run in parallel, so `first_flit_ns` is a latency, not a capacity.
 */
export function portHopModel(context: ForwardingModelContext, params: PortHopParams): ForwardingModel {
  if (params.vcs > 0) return new VcRouter(context, params);
  const inputs = Math.max(1, context.inputs.length);
  const inputFree = new Float64Array(inputs);
  const outputFree = new Float64Array(Math.max(1, context.outputs.length));
  const flitNsIn = portFlitNs(params, context.inputGbs, inputs);
  const flitNsOut = portFlitNs(params, context.outputGbs, outputFree.length);
  const pipelineNs = params.first_flit_ns;
  const buffer = params.buffer_flits;
  /** Flits of room promised on each input (credits the hop upstream has used). */
  const reserved = new Float64Array(inputs);
  let waitedNs = 0;
  let refusals = 0;
  const room = (packet: HopPacket) => Math.min(packet.flits(params.flit_bytes), buffer);
  const release = (event: Event<{ inPort: number; flits: number }>) => {
    const { inPort, flits } = event.value;
    reserved[inPort] = (reserved[inPort] as number) - flits;
    context.resume(inPort);
  };
  const credits: Pick<ForwardingModel, "admit"> =
    buffer === 0
      ? {}
      : {
          admit(packet: HopPacket): boolean {
            const inPort = packet.inPort;
            if (inPort < 0) return true;
            const flits = room(packet);
            if ((reserved[inPort] as number) + flits > buffer) {
              refusals++;
              return false;
            }
            reserved[inPort] = (reserved[inPort] as number) + flits;
            return true;
          },
        };
  /** Bytes per port of a bundle whose packets cross by different ports (scratch, zero between uses). */
  const inBytes = new Float64Array(inputs);
  const outBytes = new Float64Array(outputFree.length);
  const flitsOf = (bytes: number) => Math.max(1, Math.ceil(bytes / params.flit_bytes));
  /**
   * Marks the ports a packet's head leaving at `head` uses busy until its flits have crossed each
   * (never earlier than they already were); returns when its tail has crossed the slowest.
   */
  const occupy = (packet: HopPacket, parts: readonly HopPart[] | null, head: number): number => {
    if (parts === null) {
      const inPort = Math.max(packet.inPort, 0);
      const outPort = Math.max(packet.outPort, 0);
      const flits = packet.flits(params.flit_bytes);
      const tailIn = head + flits * (flitNsIn[inPort] as number);
      const tailOut = head + flits * (flitNsOut[outPort] as number);
      if (tailIn > (inputFree[inPort] as number)) inputFree[inPort] = tailIn;
      if (tailOut > (outputFree[outPort] as number)) outputFree[outPort] = tailOut;
      return Math.max(tailIn, tailOut);
    }
    // Each port carries the bytes of the packets that cross it (a fan-out's input all of them).
    for (const part of parts) {
      const inPort = Math.max(part.inPort, 0);
      const outPort = Math.max(part.outPort, 0);
      inBytes[inPort] = (inBytes[inPort] as number) + part.bytes;
      outBytes[outPort] = (outBytes[outPort] as number) + part.bytes;
    }
    let tail = head;
    for (const part of parts) {
      const inPort = Math.max(part.inPort, 0);
      const outPort = Math.max(part.outPort, 0);
      const bytesIn = inBytes[inPort] as number;
      if (bytesIn >= 0) {
        const tailIn = head + flitsOf(bytesIn) * (flitNsIn[inPort] as number);
        if (tailIn > (inputFree[inPort] as number)) inputFree[inPort] = tailIn;
        if (tailIn > tail) tail = tailIn;
        inBytes[inPort] = -1; // counted
      }
      const bytesOut = outBytes[outPort] as number;
      if (bytesOut >= 0) {
        const tailOut = head + flitsOf(bytesOut) * (flitNsOut[outPort] as number);
        if (tailOut > (outputFree[outPort] as number)) outputFree[outPort] = tailOut;
        if (tailOut > tail) tail = tailOut;
        outBytes[outPort] = -1;
      }
    }
    for (const part of parts) {
      inBytes[Math.max(part.inPort, 0)] = 0;
      outBytes[Math.max(part.outPort, 0)] = 0;
    }
    return tail;
  };
  return {
    ...credits,
    arrive(packet: HopPacket): number {
      const ready = packet.headNs + pipelineNs;
      const parts = packet.parts;
      let head: number;
      if (parts === null) {
        const inPort = Math.max(packet.inPort, 0);
        const outPort = Math.max(packet.outPort, 0);
        head = Math.max(ready, inputFree[inPort] as number, outputFree[outPort] as number);
      } else {
        // A bundle's packets leave together: when every port one of them uses is free.
        head = ready;
        for (const part of parts) {
          const free = Math.max(
            inputFree[Math.max(part.inPort, 0)] as number,
            outputFree[Math.max(part.outPort, 0)] as number,
          );
          if (free > head) head = free;
        }
      }
      const tail = occupy(packet, parts, head);
      waitedNs += head - ready;
      context.service(head, tail - head, packet);
      return head;
    },
    left(packet: HopPacket, headNs: number): void {
      // Held back by the next hop's credits: each port stays busy until this packet's flits have crossed it.
      const tail = occupy(packet, packet.parts, headNs);
      if (buffer > 0 && packet.inPort >= 0) {
        // Its room is free once its tail has left, through the slowest port it uses.
        context.env
          .timeout(tail - context.env.now, { inPort: packet.inPort, flits: room(packet) })
          .addCallback(release);
      }
    },
    stats(): readonly ModelStat[] {
      return [
        { ...PORT_WAIT, total: waitedNs },
        { ...CREDIT_STALLS, total: refusals },
      ];
    },
  };
}

/**
 * A flit's time on each of `count` ports, ns: `flit_bytes / GB/s` of the port's link with
 * `port_rate: link` (a port without a link, or a link of no bandwidth, at the cycle rate), else
 * `cycle_ns / port_flits_per_cycle` on every port.
 */
function portFlitNs(params: PortHopParams, linkGbs: readonly number[], count: number): Float64Array {
  const cycleFlitNs = params.cycle_ns / params.port_flits_per_cycle;
  const flitNs = new Float64Array(count).fill(cycleFlitNs);
  if (params.port_rate === "link") {
    for (let port = 0; port < count; port++) {
      const gbs = linkGbs[port];
      if (gbs !== undefined && gbs > 0) flitNs[port] = params.flit_bytes / gbs;
    }
  }
  return flitNs;
}

/** `port_hop_v1`: a router, XBAR half, bridge or UCIe port with a pipeline latency and a rate per port. */
export const portHopV1 = defineForwardingModel({
  kind: "noc_router",
  alsoKinds: ["xbar", "bridge", "ucie_port"],
  impl: "port_hop_v1",
  analytic: true,
  description:
    "Forwarding hop with latency apart from occupancy: a head crosses first_flit_ns of pipeline; each input and output port moves whole flits of flit_bytes at its link's bandwidth (port_rate: link, the default) or port_flits_per_cycle per cycle_ns (port_rate: cycle); one FIFO per input, first come first served per output.",
  params: portHopParams,
  counters: [...PORT_HOP_COUNTERS],
  create: portHopModel,
});
