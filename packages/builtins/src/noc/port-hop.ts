import {
  defineForwardingModel,
  type Event,
  type ForwardingModel,
  type ForwardingModelContext,
  forwardingTopologyParams,
  type HopPacket,
  type ModelStat,
} from "@kb/components";
import * as z from "zod";
import { PORT_HOP_COUNTERS, VcRouter } from "./vc-router.js";

/**
 * Params of `port_hop_v1`: the topology's `first_flit_ns` (the pipeline latency a head crosses)
 * and the rate of each port. Defaults fit the reference topologies' NOC (64 B flits every 0.5 ns:
 * 128 GB/s per port, the NOC links' rate); BookSim 2's reference router is `flit_bytes: 16,
 * cycle_ns: 1` with `cube.noc.first_flit_ns: 4`.
 */
export const portHopParams = forwardingTopologyParams.extend({
  flit_bytes: z
    .number()
    .int()
    .min(1)
    .default(64)
    .describe("Flit size, bytes (a 0-byte request is one head flit)."),
  cycle_ns: z.number().positive().default(0.5).describe("Clock period of the ports, ns."),
  port_flits_per_cycle: z
    .number()
    .positive()
    .default(1)
    .describe("Flits each input and each output port moves per cycle (the hop's service rate per port)."),
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
 * holds its input port and its output port for `s = F x cycle_ns / port_flits_per_cycle`; its
 * head leaves at `max(arrival + first_flit_ns, input free, output free)`, and both ports are free
 * again at `head + s`. Packets on one input leave in arrival order (one FIFO per input: a head
 * waiting for its output blocks the packets behind it); each output serves heads first come,
 * first served. Ports of different packets run in parallel, so `first_flit_ns` is a latency, not
 * a capacity: a hop moves up to `port_flits_per_cycle` flits per cycle on every port at once.
 */
function portHop(context: ForwardingModelContext, params: PortHopParams): ForwardingModel {
  if (params.vcs > 0) return new VcRouter(context, params);
  const inputs = Math.max(1, context.inputs.length);
  const inputFree = new Float64Array(inputs);
  const outputFree = new Float64Array(Math.max(1, context.outputs.length));
  const flitNs = params.cycle_ns / params.port_flits_per_cycle;
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
  return {
    ...credits,
    arrive(packet: HopPacket): number {
      const inPort = packet.inPort < 0 ? 0 : packet.inPort;
      const outPort = packet.outPort < 0 ? 0 : packet.outPort;
      const ready = packet.headNs + pipelineNs;
      const head = Math.max(ready, inputFree[inPort] as number, outputFree[outPort] as number);
      const serviceNs = packet.flits(params.flit_bytes) * flitNs;
      inputFree[inPort] = head + serviceNs;
      outputFree[outPort] = head + serviceNs;
      waitedNs += head - ready;
      context.service(head, serviceNs, packet);
      return head;
    },
    left(packet: HopPacket, headNs: number): void {
      // Held back by the next hop's credits: both ports stay busy until this tail has left.
      const inPort = packet.inPort < 0 ? 0 : packet.inPort;
      const outPort = packet.outPort < 0 ? 0 : packet.outPort;
      const tailOut = headNs + packet.flits(params.flit_bytes) * flitNs;
      if (tailOut > (inputFree[inPort] as number)) inputFree[inPort] = tailOut;
      if (tailOut > (outputFree[outPort] as number)) outputFree[outPort] = tailOut;
      if (buffer > 0 && packet.inPort >= 0) {
        context.env.timeout(tailOut - context.env.now, { inPort, flits: room(packet) }).addCallback(release);
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

/** `port_hop_v1`: a router, XBAR half, bridge or UCIe port with a pipeline latency and a rate per port. */
export const portHopV1 = defineForwardingModel({
  kind: "noc_router",
  alsoKinds: ["xbar", "bridge", "ucie_port"],
  impl: "port_hop_v1",
  analytic: true,
  description:
    "Forwarding hop with latency apart from occupancy: a head crosses first_flit_ns of pipeline; each input and output port moves port_flits_per_cycle flits of flit_bytes per cycle_ns (one FIFO per input, first come first served per output).",
  params: portHopParams,
  counters: [...PORT_HOP_COUNTERS],
  create: portHop,
});
