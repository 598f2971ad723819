import type { Event } from "@kb/des";
import { KbError } from "@kb/errors";
import type { TopologyEdge, TopologyGraph } from "@kb/topology";
import { Component, type ComponentContext } from "./component.js";
import type {
  ForwardingModel,
  ForwardingModelContext,
  ForwardingModelDefinition,
  HopPacket,
  HopPart,
} from "./forwarding.js";
import type { Message } from "./message.js";
import type { ModelStat } from "./model-stats.js";
import { type Gate, Packet, type Stop } from "./packet.js";

/**
 * The framework's side of a forwarding model: a component that serves each packet on arrival
 * (no worker: the delivery of its head is the hop's only engine event, as for `transit_v1`),
 * asks the model when its head leaves, forwards it, and, when the model has `admit`, is the
 * {@link Gate} of its inputs: packets refused there wait upstream, per input, in order.
 */
export class ForwardingComponent<P = unknown> extends Component<P> {
  readonly model: ForwardingModel;
  /** Non-null when the model admits packets (finite inputs): the fabric asks it before a head leaves for this hop. @internal */
  readonly gate: Gate | null;
  private inputList: string[] | null = null;
  private inputRates: number[] | null = null;
  private inputIndex: Map<TopologyEdge, number> | null = null;
  private outputIndex: Map<TopologyEdge, number> | null = null;
  /** Packets refused at each input, oldest first, with the component they leave from. */
  private readonly waiting = new Map<number, Waiting[]>();
  private readonly resumeScheduled = new Set<number>();
  /** The packet being re-offered by {@link resumeEvent}, admitted without asking again. */
  private bypass: Packet | null = null;
  /** The end of the latest service counted ({@link service}). */
  private busyUntilNs = 0;
  /** Packets `arrive()` held (returned undefined) that the model has not sent yet. */
  private heldCount = 0;
  private readonly track: string;

  constructor(context: ComponentContext, params: P, definition: ForwardingModelDefinition) {
    const depth = (params as { queue_depth?: unknown }).queue_depth;
    super(context, params, typeof depth === "number" ? { queueDepth: depth } : {});
    this.track = this.id;
    this.model = definition.create(new HopContext(context, this), params as never);
    if (this.model === null || typeof this.model !== "object" || typeof this.model.arrive !== "function") {
      throw new KbError(
        "COMPONENT_INVALID_DEFINITION",
        `forwarding model ${this.impl}: create() must return an object with arrive(packet).`,
        { context: { nodeId: this.id } },
      );
    }
    this.gate = typeof this.model.admit === "function" ? new InputGate(this) : null;
  }

  /** The model's counters (empty when it publishes none). */
  override modelStats(): readonly ModelStat[] {
    return this.model.stats?.() ?? [];
  }

  /** Serves a packet's head on arrival: asks the model when it leaves, and sends it then. */
  override enqueue(message: Message): null {
    if (!(message instanceof Packet)) throw notAPacket(this, message);
    const stats = this.stats;
    stats.ops++;
    stats.bytes += message.bytes;
    const view = new HopView(message, this, message.stop, this.env.now);
    message.hop = view;
    const departNs = this.model.arrive(view);
    if (departNs !== undefined) {
      // `send`, without its checks of the packet (the framework's own hand-over).
      if (message.hop !== view || !(departNs >= view.headNs) || !Number.isFinite(departNs)) {
        this.send(view, departNs); // throws: sent already, or a bad time
      }
      message.departNs = departNs;
      message.forward(this);
      if (message.waitingAt === null) this.departed(view, departNs);
    } else {
      this.heldCount++;
    }
    return null;
  }

  process(message: Message): Event<unknown> | null {
    // Packets never reach the worker (enqueue serves them); anything put into the inbox directly is a mistake.
    throw notAPacket(this, message);
  }

  /** @internal `context.send`: the head of a packet at this hop leaves at `headNs`. */
  send(packet: HopPacket, headNs: number, tailNs?: number): void {
    const view = packet as HopView;
    const now = this.env.now;
    if (
      !(view instanceof HopView) ||
      view.hop !== this ||
      view.packet.hop !== view ||
      view.packet.waitingAt !== null
    ) {
      throw this.misuse(
        `sent ${view instanceof HopView ? `"${view.label}" twice, or a packet that is not at this hop` : "something that is not a packet it was given"}; send each packet arrive() held exactly once.`,
      );
    }
    if (!(headNs >= now) || !Number.isFinite(headNs)) {
      throw this.misuse(
        `sent "${view.label}" (arrived at ${view.headNs} ns) to leave at ${headNs} ns, before now (${now} ns) or not finite; a head leaves at or after the current time.`,
      );
    }
    if (tailNs !== undefined && !(tailNs >= headNs && Number.isFinite(tailNs))) {
      throw this.misuse(
        `sent "${view.label}" with its tail leaving at ${tailNs} ns, before its head (${headNs} ns) or not finite; a paced tail leaves at or after the head.`,
      );
    }
    const message = view.packet;
    this.heldCount--;
    message.departNs = headNs;
    message.pacedTailNs = tailNs ?? -1;
    message.forward(this);
    if (message.waitingAt === null) this.departed(view, headNs);
  }

  /**
   * @internal What the model holds (for the deadlock report): packets `arrive()` held and not
   * sent, and packets refused at its inputs (waiting upstream for `context.resume`).
   */
  holding(): { readonly held: number; readonly refused: number } {
    let refused = 0;
    for (const queue of this.waiting.values()) refused += queue.length;
    return { held: this.heldCount, refused };
  }

  /** A packet of this hop left (at once, or after waiting for the next hop's admission). */
  private departed(view: HopView, headNs: number): void {
    if (view.packet.hop === view) view.packet.hop = null;
    this.model.left?.(view, headNs);
  }

  /** @internal `context.resume`: offers the packets waiting for `inPort` again, in an event now. */
  resume(inPort: number): void {
    if (!this.waiting.has(inPort) || this.resumeScheduled.has(inPort)) return;
    this.resumeScheduled.add(inPort);
    this.env.timeout(0, inPort).addCallback(this.resumeEvent);
  }

  private readonly resumeEvent = (event: Event<number>): void => {
    const inPort = event.value;
    this.resumeScheduled.delete(inPort);
    const queue = this.waiting.get(inPort);
    while (queue !== undefined && queue.length > 0) {
      const first = queue[0] as Waiting;
      if (!(this.model.admit as NonNullable<ForwardingModel["admit"]>)(this.arrivalView(first.packet)))
        return;
      queue.shift();
      if (queue.length === 0) this.waiting.delete(inPort);
      const packet = first.packet;
      const upstream = packet.hop as HopView | null;
      packet.waitingAt = null;
      this.bypass = packet;
      packet.forward(first.from);
      this.bypass = null;
      // The packet left the hop it waited at (a source or a memory has no view).
      if (upstream !== null && upstream.packet === packet) upstream.hop.departed(upstream, this.env.now);
    }
  };

  /** @internal The {@link Gate} check (see {@link InputGate}). */
  admitFrom(packet: Packet, from: Component): boolean {
    if (this.bypass === packet) return true;
    const view = this.arrivalView(packet);
    const inPort = view.inPort;
    let queue = this.waiting.get(inPort);
    if (queue === undefined && (this.model.admit as NonNullable<ForwardingModel["admit"]>)(view)) return true;
    if (queue === undefined) {
      queue = [];
      this.waiting.set(inPort, queue);
    }
    queue.push({ packet, from });
    packet.waitingAt = this.gate;
    this.stats.queueFullStalls++;
    return false;
  }

  /** The view of a packet still upstream, as it will arrive at this hop (for `admit`). */
  private arrivalView(packet: Packet): HopView {
    return new HopView(packet, this, packet.stop + 1, Math.max(packet.departNs, this.env.now));
  }

  /** Packets waiting upstream for this hop's inputs (all inputs). */
  get refusedWaiting(): number {
    let total = 0;
    for (const queue of this.waiting.values()) total += queue.length;
    return total;
  }

  /** @internal `context.service`: busy time counts once where services on several ports overlap. */
  service(startNs: number, ns: number, packet: HopPacket): void {
    const endNs = startNs + ns;
    const fromNs = Math.max(startNs, this.busyUntilNs);
    if (endNs > fromNs) this.addBusy(endNs - fromNs);
    if (endNs > this.busyUntilNs) this.busyUntilNs = endNs;
    const tracer = this.machine.tracer;
    if (tracer !== null && tracer.flowsOnly !== true) {
      // The label is a string built per packet: only when tracing (these slices carry no flow).
      const label = packet.label;
      tracer.record("engine_start", startNs, this.track, label);
      tracer.record("engine_complete", startNs + ns, this.track, label);
    }
  }

  /** The neighbours of the inputs, in edge order. */
  get inputs(): readonly string[] {
    if (this.inputList === null) {
      const edges = inEdges(this.machine.graph, this.id);
      this.inputList = edges.map((edge) => edge.src);
      this.inputIndex = new Map(edges.map((edge, index) => [edge, index]));
    }
    return this.inputList;
  }

  /** The bandwidth of each input's link, GB/s, in edge order. */
  get inputGbs(): readonly number[] {
    this.inputRates ??= inEdges(this.machine.graph, this.id).map((edge) => edge.bwGbs);
    return this.inputRates;
  }

  /** @internal The input port of an edge into this hop, -1 for another edge. */
  inPortOf(edge: TopologyEdge | undefined): number {
    if (edge === undefined) return -1;
    if (this.inputIndex === null) void this.inputs;
    return (this.inputIndex as Map<TopologyEdge, number>).get(edge) ?? -1;
  }

  /** @internal The output port of an edge out of this hop, -1 for another edge. */
  outPortOf(edge: TopologyEdge | undefined): number {
    if (edge === undefined) return -1;
    this.outputIndex ??= new Map(this.machine.graph.outEdges(this.id).map((out, index) => [out, index]));
    return this.outputIndex.get(edge) ?? -1;
  }

  private misuse(what: string): KbError {
    return new KbError("MACHINE_INVARIANT", `forwarding model ${this.impl} (${this.id}) ${what}`, {
      context: { nodeId: this.id, simTimeNs: this.env.now },
    });
  }
}

interface Waiting {
  readonly packet: Packet;
  readonly from: Component;
}

/** The gate of a forwarding component whose model admits. */
class InputGate implements Gate {
  constructor(private readonly hop: ForwardingComponent) {}

  admit(packet: Packet, from: Component): boolean {
    return this.hop.admitFrom(packet, from);
  }
}

/** A packet at (or, for `admit`, bound for) a hop: the {@link HopPacket} a model sees. */
class HopView implements HopPacket {
  constructor(
    readonly packet: Packet,
    readonly hop: ForwardingComponent,
    /** The index of the hop's stop on the packet's path. */
    private readonly at: number,
    readonly headNs: number,
  ) {}

  get kind(): HopPacket["kind"] {
    const packet = this.packet;
    if (packet.response !== null) return "read_request";
    if (packet.payload !== null) return "control";
    return packet.path.end === "sink" ? "response" : "write";
  }

  get bytes(): number {
    return this.packet.bytes;
  }

  flits(flitBytes: number): number {
    return Math.max(1, Math.ceil(this.packet.bytes / flitBytes));
  }

  private get stopHere(): Stop {
    return this.packet.path.stops[this.at] as Stop;
  }

  private get stopNext(): Stop | undefined {
    return this.packet.path.stops[this.at + 1];
  }

  get inPort(): number {
    const links = this.stopHere.links;
    return this.hop.inPortOf(links[links.length - 1]?.edge);
  }

  get from(): string {
    const links = this.stopHere.links;
    return links[links.length - 1]?.edge.src ?? "";
  }

  get outPort(): number {
    return this.hop.outPortOf(this.stopNext?.links[0]?.edge);
  }

  get to(): string {
    return this.stopNext?.links[0]?.edge.dst ?? "";
  }

  get tailNs(): number {
    return Math.max(this.packet.tailNs, this.headNs);
  }

  get source(): string {
    return this.packet.path.src;
  }

  get destination(): string {
    return this.packet.path.dst;
  }

  get requester(): string {
    const path = this.packet.path;
    return path.end === "sink" ? path.dst : path.src;
  }

  get label(): string {
    return this.packet.label;
  }

  get parts(): readonly HopPart[] | null {
    const parts = this.packet.parts;
    if (parts === null) return null;
    const at = this.at;
    const hop = this.hop;
    const inPort = this.inPort;
    const outPort = this.outPort;
    let apart = false;
    const list: HopPart[] = [];
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i] as Packet;
      const stops = part.path.stops;
      const links = (stops[at] as Stop).links;
      const partIn = hop.inPortOf(links[links.length - 1]?.edge);
      const partOut = hop.outPortOf(stops[at + 1]?.links[0]?.edge);
      if (partIn !== inPort || partOut !== outPort) apart = true;
      list.push({ inPort: partIn, outPort: partOut, bytes: part.bytes });
    }
    return apart ? list : null;
  }
}

/** The context a forwarding model is created with: the component's context plus its ports and calls. */
class HopContext implements ForwardingModelContext {
  readonly id: string;
  readonly env: ComponentContext["env"];
  readonly node: ComponentContext["node"];
  readonly machine: ComponentContext["machine"];

  constructor(
    context: ComponentContext,
    private readonly hop: ForwardingComponent,
  ) {
    this.id = context.node.id;
    this.env = context.env;
    this.node = context.node;
    this.machine = context.machine;
  }

  get inputs(): readonly string[] {
    return this.hop.inputs;
  }

  get outputs(): readonly string[] {
    return this.machine.graph.outEdges(this.node.id).map((edge) => edge.dst);
  }

  get inputGbs(): readonly number[] {
    return this.hop.inputGbs;
  }

  get outputGbs(): readonly number[] {
    return this.machine.graph.outEdges(this.node.id).map((edge) => edge.bwGbs);
  }

  send(packet: HopPacket, headNs: number, tailNs?: number): void {
    this.hop.send(packet, headNs, tailNs);
  }

  resume(inPort: number): void {
    this.hop.resume(inPort);
  }

  service(startNs: number, ns: number, packet: HopPacket): void {
    this.hop.service(startNs, ns, packet);
  }
}

/** The edges into each node of a graph, in edge order (built once per graph). */
const inEdgesByGraph = new WeakMap<TopologyGraph, Map<string, TopologyEdge[]>>();

function inEdges(graph: TopologyGraph, id: string): readonly TopologyEdge[] {
  let byNode = inEdgesByGraph.get(graph);
  if (byNode === undefined) {
    byNode = new Map();
    for (const edge of graph.edges) {
      let list = byNode.get(edge.dst);
      if (list === undefined) {
        list = [];
        byNode.set(edge.dst, list);
      }
      list.push(edge);
    }
    inEdgesByGraph.set(graph, byNode);
  }
  return byNode.get(id) ?? [];
}

/** A forwarding component received something that is not a fabric packet. */
function notAPacket(component: Component, message: Message): KbError {
  return new KbError(
    "MACHINE_INVARIANT",
    `${component.kind} ${component.impl} received "${message.label}", which is not a fabric packet; only packets travel through forwarding components.`,
    { context: { nodeId: component.id, simTimeNs: component.env.now } },
  );
}
