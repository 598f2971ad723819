import {
  defineForwardingModel,
  type ForwardingModel,
  type ForwardingModelContext,
  forwardingTopologyParams,
  type HopPacket,
  type ModelStat,
  type SimEvent,
} from "@kb/spec";
import * as z from "zod";

/**
 * The params of `credit_router`: the topology's `first_flit_ns` (routes and their formula
 * latency use it) plus the router's own. Defaults fit the reference topologies' 128 GB/s NOC
 * links (64 B flits every 0.5 ns); BookSim 2's reference router is `flit_bytes: 16, cycle_ns: 1,
 * pipeline_cycles: 4, buffer_flits: 16` (README).
 */
export const creditRouterParams = forwardingTopologyParams.extend({
  flit_bytes: z
    .number()
    .int()
    .min(1)
    .default(64)
    .describe("Flit size, bytes: an output moves one flit per cycle."),
  cycle_ns: z.number().positive().default(0.5).describe("Router clock period, ns."),
  pipeline_cycles: z
    .number()
    .int()
    .min(0)
    .default(2)
    .describe("Pipeline stages a head crosses (route, allocate, traverse), cycles: the router latency."),
  buffer_flits: z
    .number()
    .int()
    .min(1)
    .default(16)
    .describe(
      "Input buffer per input port, flits: the upstream hop holds this many credits; a packet takes min(flits, buffer_flits) of them.",
    ),
});

/** The parsed params of `credit_router`. */
export type CreditRouterParams = z.output<typeof creditRouterParams>;

/**
 * A credit-based input-queued router, per node:
 *
 * - **Inputs**: each input port has `buffer_flits` of buffer, held as credits by the hop upstream.
 *   A packet is admitted (its head may leave the hop upstream) when its room, `min(flits,
 *   buffer_flits)`, is free; otherwise it waits there (back-pressure). Its room is freed, and a
 *   credit returned, when its tail has left: `head out + flits x cycle_ns`.
 * - **Pipeline and outputs**: a head that arrives at `a` is ready to leave at `a +
 *   pipeline_cycles x cycle_ns`; an output sends one flit per cycle, packets first come, first
 *   served, so the head leaves at `max(ready, output free)` and holds the output for `flits x
 *   cycle_ns`.
 */
export function creditRouter(context: ForwardingModelContext, params: CreditRouterParams): ForwardingModel {
  const inputs = context.inputs.length;
  const outputs = context.outputs.length;
  const cycle = params.cycle_ns;
  const pipelineNs = params.pipeline_cycles * cycle;
  /** Flits of room promised on each input (credits the upstream hop has used). */
  const reserved = new Float64Array(inputs);
  /** Time each output is free to start its next packet's head, ns. */
  const outputFree = new Float64Array(outputs);
  const refused = new Float64Array(inputs);
  const flitsOut = new Float64Array(outputs);
  const room = (packet: HopPacket) => Math.min(packet.flits(params.flit_bytes), params.buffer_flits);
  const release = (event: SimEvent<ReleasedRoom>) => {
    const { inPort, flits } = event.value;
    reserved[inPort] = (reserved[inPort] as number) - flits;
    context.resume(inPort);
  };
  return {
    admit(packet) {
      const inPort = packet.inPort;
      const flits = room(packet);
      if ((reserved[inPort] as number) + flits > params.buffer_flits) {
        refused[inPort] = (refused[inPort] as number) + 1;
        return false;
      }
      reserved[inPort] = (reserved[inPort] as number) + flits;
      return true;
    },
    arrive(packet) {
      const out = packet.outPort;
      const headNs = Math.max(packet.headNs + pipelineNs, outputFree[out] as number);
      const flits = packet.flits(params.flit_bytes);
      outputFree[out] = headNs + flits * cycle;
      flitsOut[out] = (flitsOut[out] as number) + flits;
      context.service(headNs, flits * cycle, packet);
      return headNs;
    },
    left(packet, headNs) {
      const flits = packet.flits(params.flit_bytes);
      const tailOut = headNs + flits * cycle;
      // Held back by the next hop's credits: the output was busy until this packet's tail left.
      const out = packet.outPort;
      if (tailOut > (outputFree[out] as number)) outputFree[out] = tailOut;
      const released: ReleasedRoom = { inPort: packet.inPort, flits: room(packet) };
      context.env.timeout(tailOut - context.env.now, released).addCallback(release);
    },
    stats(): readonly ModelStat[] {
      return [
        {
          name: "credit_stalls",
          unit: "count",
          description:
            "Times an upstream hop found no credit for a packet on an input (each wait counts once per try).",
          total: refused.reduce((sum, count) => sum + count, 0),
          perPort: [...refused],
        },
        {
          name: "flits_out",
          unit: "flits",
          description: "Flits sent per output port.",
          total: flitsOut.reduce((sum, count) => sum + count, 0),
          perPort: [...flitsOut],
        },
      ];
    },
  };
}

interface ReleasedRoom {
  readonly inPort: number;
  readonly flits: number;
}

/** `credit_router`: the model on the forwarding contract, for NOC routers. */
export const creditRouterModel = defineForwardingModel({
  kind: "noc_router",
  impl: "credit_router",
  description:
    "Credit-based input-queued router: buffer_flits per input held as credits upstream (a packet waits upstream until its room is free), a pipeline of pipeline_cycles, one flit per cycle per output, first come first served.",
  params: creditRouterParams,
  create: creditRouter,
});
