import type { Environment, StorePut } from "@kb/des";
import { Event, Store } from "@kb/des";
import type { ComponentPeak } from "@kb/spec";
import type { TopologyNode } from "@kb/topology";
import type { Machine } from "./machine.js";
import type { Message } from "./message.js";
import type { ModelStat } from "./model-stats.js";

/** What a component implementation is created with (besides its validated params). */
export interface ComponentContext {
  /** The simulation environment (time in ns). */
  readonly env: Environment;
  /** The topology node this component instance times. */
  readonly node: TopologyNode;
  /** The machine it belongs to: other components, the fabric, the op logger and tracer. */
  readonly machine: Machine;
}

/** Counters every component keeps; see {@link Component.stats}. */
export interface ComponentStats {
  /** Simulated ns spent servicing messages, summed over lanes (or what the impl reports as busy). */
  busyNs: number;
  /** Messages serviced. */
  ops: number;
  /** Payload bytes the component moved or computed on (impl-defined; 0 when not meaningful). */
  bytes: number;
  /** Puts into this component's inboxes that found the inbox full and had to wait. */
  queueFullStalls: number;
  /** Arithmetic operations performed (compute engines: 2 m n k per GEMM, elements x ops for math). */
  flops: number;
}

// The best rate a component can sustain, for rooflines: a fact of the contracts (@kb/spec).
export type { ComponentPeak } from "@kb/spec";

/** Options of the {@link Component} constructor. */
export interface ComponentOptions {
  /**
   * Independent serial workers, each with its own inbox (default 1): PE_DMA has a read and a write
   * channel, the HBM controller one lane per pseudo-channel.
   */
  readonly lanes?: number;
  /** Capacity of each lane's inbox: the hardware queue depth (default 4). */
  readonly queueDepth?: number;
  /**
   * Whether the time a lane spends in {@link Component.process} counts as busy (default true).
   * Impls that do their timing analytically (the HBM controller) report busy time themselves.
   */
  readonly countProcessTime?: boolean;
}

/** One serial worker of a component: its inbox and counters. */
export interface Lane {
  /** Lane number, 0-based. */
  readonly index: number;
  /** The inbox; capacity = the hardware queue depth. */
  readonly inbox: Store<Message>;
}

/** The generator an impl's {@link Component.process} returns: it yields DES events. */
export type StageWork = Generator<Event<any>, void, any>;

/**
 * The base of every component implementation. The framework owns the worker loop of ADR-0020 D2:
 * a lane's worker takes a message from its inbox (a `Store` whose capacity is the hardware queue
 * depth), calls the op-log start hook, runs the impl's {@link process}, calls the end hook, then
 * forwards the message by its own plan (`message.forward`, ADR-0021 D4). An impl implements only
 * its stage's timing in `process`.
 *
 * The op-log hooks run only for messages whose `dataOp` is true and only when the machine has a
 * logger: with no logger the cost is one null check per message.
 */
export abstract class Component<P = unknown> {
  /** Topology node id, such as `sip0.cube0.pe3.pe_gemm`. */
  readonly id: string;
  /** Component kind (`pe_gemm`, `xbar`, ...). */
  readonly kind: string;
  /** The implementation name as written in the topology (`pe_gemm_v1`, `@acme/kb-plugin-x:gemm`). */
  readonly impl: string;
  /** The topology node. */
  readonly node: TopologyNode;
  /** The environment. */
  readonly env: Environment;
  /** The machine. */
  readonly machine: Machine;
  /** Params after validation by the impl's schema (defaults filled in). */
  readonly params: P;
  /** Counters; read them after a run (or use `machine.stats()`). */
  readonly stats: ComponentStats = { busyNs: 0, ops: 0, bytes: 0, queueFullStalls: 0, flops: 0 };
  /** The serial workers. */
  readonly lanes: readonly Lane[];
  /**
   * Busy ns per lane (`stats.busyNs` split by lane): the framework adds each message's service
   * time to its lane; impls that report busy time themselves call {@link Component.addBusy}.
   * Reports show the spread over lanes from it (`machine.stats()`, the bottleneck verdicts).
   */
  readonly laneBusyNs: Float64Array;
  /** @internal */
  readonly countProcessTime: boolean;

  constructor(context: ComponentContext, params: P, options: ComponentOptions = {}) {
    this.node = context.node;
    this.id = context.node.id;
    this.kind = context.node.kind;
    this.impl = context.node.impl ?? "";
    this.env = context.env;
    this.machine = context.machine;
    this.params = params;
    const laneCount = options.lanes ?? 1;
    const capacity = options.queueDepth ?? 4;
    this.countProcessTime = options.countProcessTime ?? true;
    const lanes: Lane[] = [];
    for (let index = 0; index < laneCount; index++) {
      const name = laneCount === 1 ? this.id : `${this.id}#${index}`;
      lanes.push({ index, inbox: new Store<Message>(context.env, { capacity, name }) });
    }
    this.lanes = lanes;
    this.laneBusyNs = new Float64Array(laneCount);
  }

  /**
   * Counts `ns` of busy time on `lane` (default 0), in `stats.busyNs` and `laneBusyNs`: for impls
   * that report busy time themselves (`countProcessTime: false`, or time spent outside
   * {@link Component.process}).
   */
  addBusy(ns: number, lane = 0): void {
    this.stats.busyNs += ns;
    this.laneBusyNs[lane] = (this.laneBusyNs[lane] as number) + ns;
  }

  /**
   * The name of lane `index` in reports (default its number): PE_DMA's are `read` and `write`,
   * an HBM controller's `pc0`, `pc1`, ...
   */
  laneName(index: number): string {
    return String(index);
  }

  /**
   * Called once every component of the machine exists, before the run: look up peers here
   * (`this.machine.component(id)`), not in the constructor.
   */
  init(): void {}

  /** The best rate this component can sustain (default: unknown). */
  peak(): ComponentPeak {
    return {};
  }

  /**
   * The counters this component's model publishes ({@link ModelStat}s: row hits, credit stalls,
   * ...), read after a run by `machine.stats()` into `components[].stats` of the results. Default:
   * none. A memory model's or a stage engine's own `stats()` comes through here (MemoryComponent
   * and StageEngine forward to it), so every kind of component is read the same way; a
   * hand-written component overrides it. Called after the run, not on the hot path.
   */
  modelStats(): readonly ModelStat[] {
    return [];
  }

  /** Which lane services `message` (default 0). */
  laneOf(_message: Message): number {
    return 0;
  }

  /**
   * The stage logic: the simulated time servicing `message` takes. Return a generator that yields
   * DES events (`this.env.timeout(ns)`, a request's `done`); or the one event to wait for (a
   * `this.env.timeout(ns)`: no generator needed); or null when servicing takes no time.
   */
  abstract process(message: Message, lane: number): StageWork | Event<any> | null;

  /**
   * Puts `message` into the inbox of the lane that services it. Returns null when it went in at
   * once; otherwise the put to wait on (backpressure: the inbox is full), and the stall is counted
   * in `stats.queueFullStalls`.
   */
  enqueue(message: Message): StorePut<Message> | null {
    const lane =
      this.lanes.length === 1 ? (this.lanes[0] as Lane) : (this.lanes[this.laneOf(message)] as Lane);
    if (lane.inbox.tryPut(message)) return null;
    this.stats.queueFullStalls++;
    return lane.inbox.put(message);
  }

  /** Total messages waiting in the inboxes (items not yet taken by a worker). */
  get queued(): number {
    let total = 0;
    for (const lane of this.lanes) total += lane.inbox.size;
    return total;
  }
}

/**
 * The worker loop of one lane (top-level generator: cheaper than a closure per component).
 * @internal
 */
export function* laneWorker(component: Component, lane: Lane): Generator<Event<any>, void, any> {
  const env = component.env;
  const machine = component.machine;
  const inbox = lane.inbox;
  const stats = component.stats;
  const countTime = component.countProcessTime;
  const laneIndex = lane.index;
  const laneBusy = component.laneBusyNs;
  // Lanes service messages concurrently, so each gets its own trace track (slices must nest).
  const track = component.lanes.length > 1 ? `${component.id}#${laneIndex}` : component.id;
  for (;;) {
    // Take a waiting message without an engine step; wait only when the inbox is empty.
    let message = inbox.tryGet();
    if (message === undefined) message = (yield inbox.get()) as Message;
    const logger = machine.opLogger;
    let opIds: number[] | null = null;
    if (logger !== null && message.dataOp) opIds = message.logStart(logger, component.id, env.now);
    const tracer = machine.tracer;
    const started = env.now;
    // A tracer that reads only the slices of flows (the per-line tally alone) skips the others.
    const flow = tracer === null ? null : message.flowKey;
    const traced = tracer !== null && (flow !== null || tracer.flowsOnly !== true);
    if (traced) {
      tracer.record(
        "engine_start",
        started,
        track,
        message.label,
        flow === null ? undefined : `${component.node.parent}:${flow}`,
      );
      tracer.counter?.("queue depth", started, track, inbox.size);
    }
    const work = component.process(message, laneIndex);
    if (work !== null) {
      if (work instanceof Event) yield work;
      else yield* work;
    }
    const ended = env.now;
    if (countTime) {
      stats.busyNs += ended - started;
      laneBusy[laneIndex] = (laneBusy[laneIndex] as number) + ended - started;
    }
    stats.ops++;
    if (traced) tracer.record("engine_complete", ended, track, message.label);
    if (opIds !== null) message.logEnd(logger as NonNullable<typeof logger>, opIds, ended);
    const wait = message.forward(component);
    if (wait !== null) yield wait;
  }
}
