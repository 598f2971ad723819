import type { Environment, Event } from "@kb/des";
import { KbError } from "@kb/errors";
import {
  type MemoryModel,
  type MemoryModelSpec,
  type MemoryRequest,
  type MemoryTiming,
  type MemoryModelContext as SpecMemoryModelContext,
  type MemoryModelDefinition as SpecMemoryModelDefinition,
  defineMemoryModel as specDefineMemoryModel,
} from "@kb/spec";
import type { HbmAddressMap, TopologyGraph, TopologyNode } from "@kb/topology";
import type * as z from "zod";
import { BandwidthCounter } from "./bandwidth-counter.js";
import { Component, type ComponentContext, type ComponentPeak, type Lane } from "./component.js";
import { adaptedDefinition, type ComponentDefinition } from "./define.js";
import type { Message } from "./message.js";
import type { ModelStat } from "./model-stats.js";
import { type BatchTarget, Packet, PacketBatch } from "./packet.js";
import type { Tracer } from "./trace.js";

// The memory-model contract (the request, the timing, the model, its definition) is @kb/spec's;
// here is the framework's side: the context it creates a model with and the component that turns
// fabric packets into requests.
export type { MemoryModel, MemoryRequest, MemoryTiming } from "@kb/spec";

/**
 * What a memory model is created with, as the framework gives it: the contract's context
 * (`env`, `id`, `ports`, `addressMap`) plus the engine's `Environment`, the topology node and the
 * machine, for built-ins and models written on `@kb/components`.
 */
export interface MemoryModelContext extends SpecMemoryModelContext, ComponentContext {
  readonly env: Environment;
}

/**
 * A memory model's declaration on the framework ({@link defineMemoryModel} of `@kb/components`):
 * the contract's, whose `create` receives the framework's {@link MemoryModelContext}.
 */
export interface MemoryModelDefinition<S extends z.ZodType = z.ZodType>
  extends Omit<SpecMemoryModelDefinition<S>, "create"> {
  /** Creates the model for one topology node. */
  create(context: MemoryModelContext, params: z.output<S>): MemoryModel;
}

/**
 * Declares a memory model on the framework: `@kb/spec`'s {@link specDefineMemoryModel} (the same
 * checks and messages), adapted at once into a {@link ComponentDefinition} (a
 * {@link MemoryComponent} per node). A plug-in writes `defineMemoryModel` of `@kb/spec` instead
 * (plain data the registry adapts the same way); this one is for built-ins and models that need
 * the framework's context.
 */
export function defineMemoryModel<S extends z.ZodType>(
  definition: MemoryModelDefinition<S>,
): ComponentDefinition<S> {
  return memoryComponentDefinition(specDefineMemoryModel(definition)) as ComponentDefinition<S>;
}

/**
 * The framework's component definition of a memory model's plain definition (what the registry
 * registers for a plug-in's `defineMemoryModel` of `@kb/spec`).
 */
export function memoryComponentDefinition(
  definition: MemoryModelSpec | MemoryModelDefinition,
): ComponentDefinition {
  return adaptedDefinition(
    definition,
    (context, params) => new MemoryComponent(context, params, definition as MemoryModelDefinition),
  );
}

/** The window of {@link MemoryComponent.windowBusyNs}, ns. */
export const BALANCE_WINDOW_NS = 10_000;

/**
 * The number of ports of a memory node: for an HBM controller, one per pseudo-channel of the
 * topology's `cube.hbm` (the nodes the fabric routes to; an override cannot change it), else 1.
 */
function portsOf(node: TopologyNode, graph: TopologyGraph): number {
  if (node.kind !== "hbm_ctrl") return 1;
  const { channels, pseudo_channels: pseudoChannels } = graph.topology.cube.hbm;
  return channels * pseudoChannels;
}

/**
 * The framework's side of a memory model: a component with one lane per port that turns packets
 * into requests and answers into responses and completions. Its `portBusyNs` holds each port's
 * data-bus time (for per-pseudo-channel balance).
 */
export class MemoryComponent<P = unknown> extends Component<P> implements BatchTarget {
  /** @internal The fabric may deliver the parts of a bundle as one batch. */
  readonly acceptsBatches = true;
  readonly model: MemoryModel;
  readonly ports: number;
  /** Requests answered later, per port. */
  private readonly pending: Int32Array;
  /** Responses of the batch being served, answered at once (they leave as one bundle). */
  private collecting: Packet[] | null = null;
  private collectingFor: Packet | null = null;
  /**
   * With the `bundle_answers` param: the answered parts of each request bundle, held until every
   * part is answered, then sent back as one response bundle (docs/latency-model.md section 2).
   */
  private readonly answeredParts: Map<Packet, Packet[]> | null;
  /** Requests that arrived while their port was full, oldest first, per port. */
  private readonly backlog: Packet[][];
  /** Per port, whether it waits in {@link drainQueue}. */
  private readonly drainScheduled: Uint8Array;
  /**
   * Ports with a backlog that an answer made room in, in the order they were answered: one engine
   * event drains them all (not one event per port: docs/latency-model.md section 2).
   */
  private drainQueue: number[] = [];
  private drainSpare: number[] = [];
  private readonly maxPending: number;
  private bandwidth: BandwidthCounter | null = null;
  /** Per port, where its last trace slice ended (ns); created with the first slice. */
  private traceFreeNs: Float64Array | null = null;
  /** Data-bus ns per port, for reports: the same array as `laneBusyNs` (a port is a lane). */
  readonly portBusyNs: Float64Array;
  /** Bytes served per port, for reports. */
  readonly portBytes: Float64Array;
  /**
   * Data-bus ns per port in consecutive windows of {@link BALANCE_WINDOW_NS} simulated ns
   * (`windowBusyNs[w][port]`): how evenly the ports shared the load while it ran.
   */
  readonly windowBusyNs: Float64Array[] = [];

  constructor(context: ComponentContext, params: P, definition: MemoryModelDefinition) {
    const ports = portsOf(context.node, context.machine.graph);
    const depth =
      definition.queueDepth?.(params as never) ??
      Number((params as { queue_depth?: unknown }).queue_depth ?? 64);
    super(context, params, { lanes: ports, queueDepth: depth, countProcessTime: false });
    this.ports = ports;
    this.pending = new Int32Array(ports);
    this.backlog = Array.from({ length: ports }, () => []);
    this.drainScheduled = new Uint8Array(ports);
    this.portBusyNs = this.laneBusyNs;
    this.portBytes = new Float64Array(ports);
    const addressMap = context.node.kind === "hbm_ctrl" ? context.machine.graph.hbmAddressMap() : null;
    this.model = definition.create({ ...context, id: context.node.id, ports, addressMap }, params as never);
    const model = this.model as Partial<MemoryModel> | null;
    if (
      model === null ||
      typeof model !== "object" ||
      typeof model.service !== "function" ||
      (model.stats !== undefined && typeof model.stats !== "function")
    ) {
      throw new KbError(
        "COMPONENT_INVALID_DEFINITION",
        `memory model ${this.impl}: create() must return an object with service(request) (and optionally stats()).`,
        { context: { nodeId: this.id } },
      );
    }
    this.maxPending = this.model.maxPending ?? Number.POSITIVE_INFINITY;
    this.answeredParts = (params as { bundle_answers?: unknown }).bundle_answers === true ? new Map() : null;
  }

  override laneOf(message: Message): number {
    return (message as Packet).here.lane;
  }

  /** `pc0`, `pc1`, ... for an HBM controller (a port is a pseudo-channel), else `port0`, ... */
  override laneName(index: number): string {
    return `${this.kind === "hbm_ctrl" ? "pc" : "port"}${index}`;
  }

  override peak(): ComponentPeak {
    return this.model.peak?.() ?? {};
  }

  /** The model's `stats()` (none when it keeps no counters). */
  override modelStats(): readonly ModelStat[] {
    return this.model.stats?.() ?? [];
  }

  /** Requests the model has not answered yet (all ports). */
  get unanswered(): number {
    let total = 0;
    for (const count of this.pending) total += count;
    return total;
  }

  /**
   * Serves a packet on arrival: at once when its port has no backlog and room for another
   * unanswered request, else after the requests that arrived before it (the port's FIFO, drained
   * as the model answers). No worker is involved, so a request costs no engine event of its own.
   */
  override enqueue(message: Message): null {
    if (message instanceof PacketBatch) {
      this.enqueueBatch(message.packets);
      return null;
    }
    if (!(message instanceof Packet)) throw this.notAPacket(message);
    const port = message.here.lane;
    const queue = this.backlog[port] as Packet[];
    if (queue.length > 0 || (this.pending[port] as number) >= this.maxPending) {
      if (queue.length >= (this.lanes[port] as Lane).inbox.capacity) this.stats.queueFullStalls++;
      queue.push(message);
      return null;
    }
    this.serve(message, port);
    return null;
  }

  /**
   * The parts of a bundle, arrived together: each is served as if alone, and the reads answered
   * at once leave as one response bundle (docs/latency-model.md section 2).
   */
  private enqueueBatch(packets: Packet[]): void {
    const collected: Packet[] = [];
    const outer = this.collecting;
    this.collecting = collected;
    this.collectingFor = (packets[0] as Packet).bundle;
    try {
      for (const packet of packets) this.enqueue(packet);
    } finally {
      this.collecting = outer;
      this.collectingFor = null;
    }
    if (collected.length === 1) (collected[0] as Packet).forward(this);
    else if (collected.length > 1) {
      let bytes = 0;
      for (const packet of collected) bytes += packet.bytes;
      Packet.bundle(collected, bytes, 0, true).forward(this);
    }
  }

  /**
   * Whether `port` takes a request now without waiting behind others: fewer than `queue_depth`
   * requests wait for it (a model that holds `maxPending` unanswered requests makes them wait).
   */
  accepts(port: number): boolean {
    const queue = this.backlog[port];
    const lane = this.lanes[port];
    return queue !== undefined && lane !== undefined && queue.length < lane.inbox.capacity;
  }

  /** Requests waiting for their port (all ports), not yet given to the model. */
  override get queued(): number {
    let total = 0;
    for (const queue of this.backlog) total += queue.length;
    return total;
  }

  process(message: Message): Event<unknown> | null {
    // Packets never reach the worker (enqueue serves them); anything put into an inbox directly is a mistake.
    throw this.notAPacket(message);
  }

  private notAPacket(message: Message): KbError {
    return new KbError(
      "MACHINE_INVARIANT",
      `${this.kind} ${this.impl} received "${message.label}", which is not a fabric packet.`,
      { context: { nodeId: this.id, simTimeNs: this.env.now } },
    );
  }

  /** Gives one packet to the model now. */
  private serve(packet: Packet, port: number): void {
    const now = this.env.now;
    this.stats.ops++;
    this.machine.tracer?.counter?.(
      "queue depth",
      now,
      `${this.id}#${port}`,
      (this.backlog[port] as Packet[]).length,
    );
    const request = new PortRequest(this, packet, port);
    const timing = this.model.service(request);
    if (timing !== undefined) request.complete(timing);
    else if (!request.answered) {
      this.pending[port] = (this.pending[port] as number) + 1;
      request.deferred = true;
    }
  }

  /** Serves the requests waiting for `port` while it has room (after the model answered one). */
  private drain(port: number): void {
    const queue = this.backlog[port] as Packet[];
    while (queue.length > 0 && (this.pending[port] as number) < this.maxPending) {
      this.serve(queue.shift() as Packet, port);
    }
  }

  /** @internal A request was answered. */
  answered(request: PortRequest, timing: MemoryTiming): void {
    const env = this.env;
    const now = env.now;
    const { startNs, endNs } = timing;
    if (!(startNs >= request.arrivalNs && startNs >= (request.deferred ? now : request.arrivalNs))) {
      throw new KbError(
        "MACHINE_INVARIANT",
        `${this.answerWhere(request)} with startNs ${startNs}, before ${request.deferred ? `now (${now} ns)` : "its arrival"}; times must be >= the arrival and the current time.`,
        { context: { nodeId: this.id, simTimeNs: now } },
      );
    }
    if (!(endNs >= startNs) || !Number.isFinite(endNs)) {
      throw new KbError(
        "MACHINE_INVARIANT",
        `${this.answerWhere(request)} with endNs ${endNs} before startNs ${startNs} (or not finite).`,
        { context: { nodeId: this.id, simTimeNs: now } },
      );
    }
    const packet = request.packet;
    const busy = timing.busyNs ?? endNs - startNs;
    this.stats.bytes += request.bytes;
    this.portBytes[request.port] = (this.portBytes[request.port] as number) + request.bytes;
    this.addBusy(busy, request.port);
    this.addWindowBusy(request.port, startNs, startNs + busy);
    const tracer = this.machine.tracer;
    // The slices carry no flow: a tracer that reads only flows (the per-line tally) skips them.
    if (tracer !== null && tracer.flowsOnly !== true) this.traceBusy(tracer, request, startNs, busy);
    if (tracer?.counter !== undefined) {
      this.bandwidth ??= new BandwidthCounter(
        tracer,
        this.id,
        this.ports,
        (this.peak().bytesPerNs ?? 0) / this.ports,
      );
      this.bandwidth.add(request.port, startNs, startNs + busy);
    }
    if (request.kind === "read") {
      packet.becomeResponse(startNs, endNs);
      // A part of the bundle being served joins its response bundle; anything else leaves now.
      if (this.answeredParts !== null && packet.bundle !== null) this.holdPart(packet, packet.bundle);
      else if (this.collecting !== null && packet.bundle !== null && packet.bundle === this.collectingFor) {
        this.collecting.push(packet);
      } else packet.forward(this);
    } else {
      (packet.transfer as NonNullable<Packet["transfer"]>).packetDone(endNs);
    }
    if (request.deferred) {
      const port = request.port;
      this.pending[port] = (this.pending[port] as number) - 1;
      // Requests that waited for room go to the model in an event of their own, never inside
      // the model's own call (a model may answer one request while servicing another).
      if ((this.backlog[port] as Packet[]).length > 0 && !this.drainScheduled[port]) {
        this.drainScheduled[port] = 1;
        this.drainQueue.push(port);
        if (this.drainQueue.length === 1) env.timeout(0).addCallback(this.drainEvent);
      }
    }
  }

  /**
   * `bundle_answers`: holds an answered part of request bundle `bundle` until all its parts are
   * answered; then they leave as one response bundle, each part crossing its own first link from
   * its own `startNs` (or now, when that is past) and the bundle the shared links as one packet.
   */
  private holdPart(packet: Packet, bundle: Packet): void {
    const held = this.answeredParts as Map<Packet, Packet[]>;
    const parts = held.get(bundle);
    const total = (bundle.parts as Packet[]).length;
    if (parts === undefined) {
      if (total === 1) packet.forward(this);
      else held.set(bundle, [packet]);
      return;
    }
    parts.push(packet);
    if (parts.length < total) return;
    held.delete(bundle);
    let bytes = 0;
    for (const part of parts) bytes += part.bytes;
    Packet.bundle(parts, bytes, 0, true).forward(this);
  }

  /**
   * Draws a request's data-bus time on its port's track: a slice of `busyNs` from `startNs`, or
   * from the end of the port's previous slice when a model's intervals overlap (a controller
   * interleaving bursts), so a track's slices never overlap, come in time order and add up to the
   * port's busy time in the results.
   */
  private traceBusy(tracer: Tracer, request: PortRequest, startNs: number, busyNs: number): void {
    const port = request.port;
    this.traceFreeNs ??= new Float64Array(this.ports);
    const start = Math.max(startNs, this.traceFreeNs[port] as number);
    const end = start + busyNs;
    this.traceFreeNs[port] = end;
    const track = `${this.id}#${port}`;
    tracer.record("engine_start", start, track, request.packet.label);
    tracer.record("engine_complete", end, track, request.packet.label);
  }

  private answerWhere(request: PortRequest): string {
    return `memory model ${this.impl} (${this.id} port ${request.port}) answered a ${request.kind} of ${request.bytes} B that arrived at ${request.arrivalNs} ns`;
  }

  /** Drains the ports queued since the last drain event, in the order they were queued. */
  private readonly drainEvent = (): void => {
    const ports = this.drainQueue;
    // Ports answered while draining (a model may answer inside service) wait for the next event.
    this.drainQueue = this.drainSpare;
    for (const port of ports) {
      this.drainScheduled[port] = 0;
      this.drain(port);
    }
    ports.length = 0;
    this.drainSpare = ports;
  };

  private addWindowBusy(port: number, start: number, end: number): void {
    let at = start;
    while (at < end) {
      const index = Math.floor(at / BALANCE_WINDOW_NS);
      const windowEnd = (index + 1) * BALANCE_WINDOW_NS;
      const windows = this.windowBusyNs;
      while (windows.length <= index) windows.push(new Float64Array(this.ports));
      const window = windows[index] as Float64Array;
      const until = Math.min(end, windowEnd);
      window[port] = (window[port] as number) + (until - at);
      at = until;
    }
  }
}

/** A packet as a memory request. @internal */
class PortRequest implements MemoryRequest {
  readonly kind: "read" | "write";
  readonly arrivalNs: number;
  readonly tailNs: number;
  readonly bytes: number;
  readonly requester: string;
  /** Whether the model left it pending. */
  deferred = false;
  private done = false;

  /** Whether the model has answered (during `service` or later). */
  get answered(): boolean {
    return this.done;
  }

  constructor(
    private readonly memory: MemoryComponent,
    readonly packet: Packet,
    readonly port: number,
  ) {
    const read = packet.response !== null;
    this.kind = read ? "read" : "write";
    this.arrivalNs = memory.env.now;
    this.tailNs = read ? this.arrivalNs : Math.max(packet.tailNs, this.arrivalNs);
    this.bytes = read ? packet.returnBytes : packet.bytes;
    this.requester = packet.path.src;
  }

  get ranges(): readonly number[] {
    const ranges = this.packet.ranges;
    return ranges === null ? [] : ranges.of(this.port);
  }

  complete(timing: MemoryTiming): void {
    if (this.done) {
      throw new KbError(
        "MACHINE_INVARIANT",
        `memory model ${this.memory.impl} (${this.memory.id}) answered the same ${this.kind} request twice; complete() each request once.`,
        { context: { nodeId: this.memory.id, simTimeNs: this.memory.env.now } },
      );
    }
    this.done = true;
    this.memory.answered(this, timing);
  }
}
