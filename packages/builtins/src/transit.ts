import {
  defineForwardingModel,
  type ForwardingModel,
  type ForwardingModelContext,
  forwardingTopologyParams,
  type HopPacket,
} from "@kb/components";
import * as z from "zod";

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

/** Params of `transit_v1`: the topology's `first_flit_ns` and the unused `queue_depth`. */
export const transitParams = forwardingTopologyParams.extend({ queue_depth: hopQueueDepthParam() });

/**
 * A FIFO server that spends `overheadNs` on each packet's first flit: service starts at
 * `max(arrival, freeAt)` and ends `overheadNs` later, when the head leaves (docs/latency-model.md
 * section 4). Packets arrive in time order, so each waits for the ones before it.
 */
function fifoHop(context: ForwardingModelContext, overheadNs: number): ForwardingModel {
  /** Time until which the server is promised to packets that arrived earlier, ns. */
  let freeAt = 0;
  const machine = context.machine;
  const track = context.node.id;
  return {
    arrive(packet: HopPacket): number {
      const now = packet.headNs;
      const start = Math.max(freeAt, now);
      const end = start + overheadNs;
      freeAt = end;
      const tracer = machine.tracer;
      if (tracer !== null) {
        // Packets ahead of this one when it arrived, drawn where its service starts (one track, in time order).
        const ahead = overheadNs > 0 ? Math.ceil((start - now) / overheadNs) : 0;
        tracer.counter?.("queue depth", start, track, ahead);
      }
      context.service(start, overheadNs, packet);
      return end;
    },
  };
}

/** The forwarding impl of NOC routers, XBAR halves, the bridge and UCIe ports. */
export const transitV1 = defineForwardingModel({
  kind: "noc_router",
  alsoKinds: ["xbar", "bridge", "ucie_port"],
  impl: "transit_v1",
  analytic: true,
  description:
    "Forwarding hop (NOC router, XBAR half, bridge, UCIe port): a FIFO server pays first_flit_ns per packet on arrival, then the packet moves cut-through over the next links (bandwidth-shared, FIFO).",
  params: transitParams,
  create: (context, params) => fifoHop(context, params.first_flit_ns),
});

/** M_CPU.DMA: forwards host <-> HBM traffic paying `forward_ns`. */
export const mCpuDmaV1 = defineForwardingModel({
  kind: "m_cpu_dma",
  impl: "m_cpu_dma_v1",
  analytic: true,
  description:
    "The cube manager's DMA engine: carries host <-> HBM copies between IO_CPU and the XBAR, a FIFO server paying forward_ns per packet.",
  params: z.strictObject({
    forward_ns: z
      .number()
      .min(0)
      .default(20)
      .describe("Overhead per forwarded packet in ns (set by the topology)."),
    queue_depth: hopQueueDepthParam(),
  }),
  create: (context, params) => fifoHop(context, params.forward_ns),
});
