import * as z from "zod";
import {
  type ContractStamp,
  checkDefinitionBase,
  definitionFailure,
  definitionWhere,
  type ModelDefinitionBase,
  type SimEnvironment,
  stamp,
} from "./model-definition.js";
import type { ModelStat } from "./model-stats.js";

/**
 * A packet at a forwarding hop (NOC router, XBAR half, bridge, UCIe port, M_CPU.DMA), as a
 * {@link ForwardingModel} sees it: read-only, built by the framework from the fabric's packet.
 *
 * Ports are numbered per hop: input `i` is the `i`-th topology edge into the hop
 * (`context.inputs[i]` names the neighbour it comes from), output `o` the `o`-th edge out of it
 * (`context.outputs[o]`), both in the topology's expansion order.
 *
 * **Gotchas**: a packet may be a *bundle* (the packets of one DMA block to several HBM
 * pseudo-channels behind one XBAR half, docs/latency-model.md section 2): it crosses the hop as
 * one packet of `bytes`. A read request carries 0 bytes. The object is valid while the packet is
 * at this hop; keep what you need (its `inPort`, its flits), not the object, after it left.
 */
export interface HopPacket {
  /** `read_request` (0 bytes: the memory answers with a response), `write`, `response` (read data, completion notices) or `control` (launch and completion messages). */
  readonly kind: "read_request" | "write" | "response" | "control";
  /** Payload bytes crossing the hop (0 for a read request). */
  readonly bytes: number;
  /** Flits of `flitBytes` bytes the packet takes: `max(1, ceil(bytes / flitBytes))` (a 0-byte request is a head flit). */
  flits(flitBytes: number): number;
  /** The input port it arrived on; -1 when the hop has no edge from the previous node (never for a topology route). */
  readonly inPort: number;
  /** The node it arrived from (the neighbour at the other end of input `inPort`). */
  readonly from: string;
  /** The output port it leaves by, towards {@link to}. */
  readonly outPort: number;
  /** The next node on its route (the neighbour at the other end of output `outPort`). */
  readonly to: string;
  /**
   * When its head arrived at this hop, ns (the current time in `arrive`). In `admit`, asked
   * while the packet is still upstream: when its head leaves the upstream hop.
   */
  readonly headNs: number;
  /** When its tail arrived at this hop (>= `headNs`), ns; in `admit`, when it reached the upstream hop. */
  readonly tailNs: number;
  /** The first node of its route (a PE_DMA, `host`, an HBM pseudo-channel for a response). */
  readonly source: string;
  /** The last node of its route. */
  readonly destination: string;
  /** The node whose transfer it belongs to: the source of a request or write, the destination of a response. */
  readonly requester: string;
  /** A short name for traces (`"read req 2048B"`, `"4096B x4"`). */
  readonly label: string;
  /**
   * For a bundle whose packets cross this hop by different ports: each one's input port,
   * output port and bytes, in the bundle's order. That is a request or write bundle at its last
   * hop (each packet leaves by its own pseudo-channel's link, with the bundle's head) and a
   * response bundle at its first hop (each came in on its own). `null` for a packet, or a bundle
   * that crosses this hop whole on `inPort` -> `outPort`. A model that paces its ports charges
   * each port the bytes that cross it (`port_hop_v1`); one that does not may ignore it.
   * Built when read: read it once per packet.
   */
  readonly parts: readonly HopPart[] | null;
}

/** One packet of a bundle that crosses a hop by its own ports ({@link HopPacket.parts}). */
export interface HopPart {
  /** The input port it arrives on (as {@link HopPacket.inPort}). */
  readonly inPort: number;
  /** The output port it leaves by (as {@link HopPacket.outPort}). */
  readonly outPort: number;
  /** Its payload bytes (0 for a read request). */
  readonly bytes: number;
}

/**
 * A forwarding model instance: what {@link defineForwardingModel}'s `create` returns. The
 * framework calls it in simulated-time order; all times are ns.
 *
 * The life of a packet at a hop: the upstream hop (or the source) asks {@link admit} before the
 * head leaves towards this hop; the head arrives (`arrive`); the model says when the head leaves
 * (now, or later with `context.send`); the framework asks the next hop's `admit`, waits if
 * refused, then moves the packet over the next links (cut-through, docs/latency-model.md section
 * 2) and tells this model it {@link left}.
 */
export interface ForwardingModel {
  /**
   * A packet's head arrived on an input (at `packet.headNs`, the current time). Return when its
   * head leaves towards the next hop (>= now), or `undefined` to hold it and release it later
   * with `context.send(packet, headNs)` (a router arbitrating, a packet waiting for a credit of
   * its own).
   */
  arrive(packet: HopPacket): number | undefined;
  /**
   * Finite input buffers: called when a packet is about to leave the upstream hop (or its
   * source) for input `packet.inPort` of this hop. Return false to refuse it: its head then does
   * not leave; it waits upstream, in order behind any packet already waiting for that input,
   * until this model calls `context.resume(inPort)`, when the framework asks again. Reserve the
   * packet's room when you return true (a credit consumed). Default: always admitted (an
   * unbounded input).
   */
  admit?(packet: HopPacket): boolean;
  /**
   * The packet's head actually left at `headNs` (>= the time `arrive` or `send` gave: later when
   * the next hop refused it for a while). Free its input room here, or when its tail has left
   * (`headNs + flits x flit time`; a credit returned, then `context.resume(packet.inPort)`).
   */
  left?(packet: HopPacket, headNs: number): void;
  /** The model's counters (credit stalls, flits per port...), copied into the run's results. */
  stats?(): readonly ModelStat[];
}

/** What a forwarding model is created with. */
export interface ForwardingModelContext {
  /** The simulation's clock: `env.now`, `env.timeout(ns, value).addCallback(...)` (a credit returned later). */
  readonly env: SimEnvironment;
  /** The topology node id (`sip0.cube0.noc.r0_1`). */
  readonly id: string;
  /** The neighbour each input port comes from (`inputs[packet.inPort]`), in topology edge order. */
  readonly inputs: readonly string[];
  /** The neighbour each output port leads to (`outputs[packet.outPort]`), in topology edge order. */
  readonly outputs: readonly string[];
  /**
   * The bandwidth of the link on each input port, GB/s (bytes per ns; `inputGbs[packet.inPort]`,
   * the topology edge from `inputs[i]`): what a model that paces a port at its link's rate needs
   * (`port_hop_v1`'s `port_rate: link`). The framework charges the links themselves whatever the
   * model (docs/latency-model.md section 2).
   */
  readonly inputGbs: readonly number[];
  /** The bandwidth of the link on each output port, GB/s (`outputGbs[packet.outPort]`, the edge to `outputs[o]`). */
  readonly outputGbs: readonly number[];
  /**
   * Releases a packet `arrive` held: its head leaves at `headNs` (>= now). Each held packet is
   * sent exactly once.
   *
   * `tailNs` (>= `headNs`), for a model that paces the flits onto its output itself (a flit-level
   * router interleaving the flits of several packets on one output): its tail has left at
   * `tailNs`. The links to the next hop then add only their latency, without waiting for an
   * earlier packet's bytes (the model moves no more flits per cycle than the links take), and the
   * packet's tail arrives at `tailNs` plus their latency, not at its arrival here plus
   * `first_flit_ns`. Without it, the links serialise the packet after the ones sent before it.
   */
  send(packet: HopPacket, headNs: number, tailNs?: number): void;
  /**
   * Room freed on input `inPort` (a credit returned): the packets waiting upstream for it are
   * offered to `admit` again, oldest first, in an event at the current time.
   */
  resume(inPort: number): void;
  /**
   * Counts `ns` of service on the hop from `startNs` (its busy time and utilisation in the
   * results) and draws it on the hop's trace track. Services that overlap (packets on different
   * ports at once) count once: a hop's busy time is the time it served something on any port.
   */
  service(startNs: number, ns: number, packet: HopPacket): void;
}

/** The kinds of topology node that forward packets. */
export type ForwardingKind = "noc_router" | "xbar" | "bridge" | "ucie_port" | "m_cpu_dma";

/** The kinds of topology node that forward packets, as a list. */
export const FORWARDING_KINDS: readonly ForwardingKind[] = [
  "noc_router",
  "xbar",
  "bridge",
  "ucie_port",
  "m_cpu_dma",
];

/**
 * The params the topology gives every NOC router, XBAR half, bridge and UCIe port: a forwarding
 * model's schema extends this (`forwardingTopologyParams.extend({ ... })`) so its strict parse
 * accepts them.
 *
 * `first_flit_ns` is the hop's per-packet overhead as the topology states it (`cube.noc.first_flit_ns`,
 * `cube.xbar.first_flit_ns`, ...; per node with an override's `params.first_flit_ns`). The
 * framework uses it whatever the model: routes are chosen and their formula latency computed
 * with it (`kb probe`, `idealTransferNs`), and a packet's tail leaves the hop no earlier than it
 * arrived plus `first_flit_ns`. A model decides when the head leaves.
 */
export const forwardingTopologyParams = z.strictObject({
  first_flit_ns: z
    .number()
    .min(0)
    .default(1)
    .describe(
      "Per-hop overhead of a packet's first flit, ns (set by the topology: cube.noc.first_flit_ns, cube.xbar.first_flit_ns, ...). Routes and their formula latency use it; a packet's tail leaves no earlier than its arrival plus this.",
    ),
});

/** A forwarding model's declaration, for {@link defineForwardingModel}. */
export interface ForwardingModelDefinition<S extends z.ZodType = z.ZodType> extends ModelDefinitionBase<S> {
  /** The kind it times: `"noc_router"`, `"xbar"`, `"bridge"`, `"ucie_port"` or `"m_cpu_dma"`. */
  readonly kind: ForwardingKind;
  /** Further kinds it may also time (`transit_v1` times routers, XBAR halves, the bridge and UCIe ports). */
  readonly alsoKinds?: readonly ForwardingKind[];
  /**
   * The params schema. The topology gives a router, XBAR half, bridge and UCIe port its
   * `first_flit_ns` (see {@link forwardingTopologyParams}; extend it) and M_CPU.DMA its `forward_ns`.
   */
  readonly params: S;
  /** Creates the model for one topology node. */
  create(context: ForwardingModelContext, params: z.output<S>): ForwardingModel;
}

/** What {@link defineForwardingModel} returns: the checked definition as plain data, for the framework to adapt. */
export type ForwardingModelSpec<S extends z.ZodType = z.ZodType> = ForwardingModelDefinition<S> &
  ContractStamp<"forwarding">;

/**
 * Declares a forwarding model (a router, an XBAR half, a bridge, a UCIe port, M_CPU.DMA): one
 * decision per packet, when its head leaves, plus optional admission for finite input buffers.
 * Returns the definition as plain data ({@link ForwardingModelSpec}); the framework
 * (`@kb/components`) does the rest: it turns fabric packets into {@link HopPacket}s, moves them
 * cut-through over the links (docs/latency-model.md section 2), holds a packet upstream while the
 * next hop refuses it (back-pressure reaches the previous hop, and the source's queue at the
 * first hop), keeps `stats` (ops, bytes, `queueFullStalls` = refusals) and reports a model that
 * answers wrongly (a departure before now, a packet sent twice).
 *
 * ```ts
 * export const fixedHop = defineForwardingModel({
 *   kind: "noc_router",
 *   impl: "fixed_hop",
 *   description: "Every packet's head leaves latency_ns after it arrived; no contention.",
 *   params: forwardingTopologyParams.extend({ latency_ns: z.number().min(0).default(4) }),
 *   create: (_context, params) => ({ arrive: (packet) => packet.headNs + params.latency_ns }),
 * });
 * ```
 *
 * Throws `COMPONENT_INVALID_DEFINITION` (`defineForwardingModel("impl"): ...`) for a kind that
 * does not forward, a missing `create`, or a malformed name, description, params or counters.
 */
export function defineForwardingModel<S extends z.ZodType>(
  definition: ForwardingModelDefinition<S>,
): ForwardingModelSpec<S> {
  checkForwardingModel(definition);
  return stamp(definition, "forwarding");
}

/** The checks of {@link defineForwardingModel} (also run on a loaded plug-in's data). @internal */
export function checkForwardingModel(definition: unknown): void {
  const where = definitionWhere("defineForwardingModel", definition);
  const fail = definitionFailure(where);
  if (definition === null || typeof definition !== "object") fail("expects an object.");
  const d = definition as Partial<ForwardingModelDefinition>;
  for (const kind of [d.kind, ...(d.alsoKinds ?? [])]) {
    if (!FORWARDING_KINDS.includes(kind as ForwardingKind)) {
      fail(
        `kind ${JSON.stringify(kind)} does not forward packets; use one of ${FORWARDING_KINDS.map((name) => `"${name}"`).join(", ")}.`,
      );
    }
  }
  if (typeof d.create !== "function") {
    fail("create(context, params) must be a function returning { arrive(packet) }.");
  }
  checkDefinitionBase(definition, where);
}
