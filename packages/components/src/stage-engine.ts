import type { Environment, Event, Request, Resource } from "@kb/des";
import { formatSimTime, KbError } from "@kb/errors";
import {
  gemmWork,
  type StageEngineContext as SpecStageEngineContext,
  type StageEngineDefinition as SpecStageEngineDefinition,
  STAGE_ENGINE_STAGES,
  type StageEngineArray,
  type StageEngineKind,
  type StageEngineSpec,
  defineStageEngine as specDefineStageEngine,
  type TileWorkOf,
} from "@kb/spec";
import type * as z from "zod";
import {
  Component,
  type ComponentContext,
  type ComponentPeak,
  type ComponentStats,
  type StageWork,
} from "./component.js";
import { adaptedDefinition, type ComponentDefinition } from "./define.js";
import type { GemmTiming } from "./gemm-timing.js";
import type { Machine } from "./machine.js";
import { type Message, type StageType, TileToken } from "./message.js";
import type { ModelStat } from "./model-stats.js";
import { computeSlotOf } from "./pe-support.js";

// The stage-engine contract (the work a timing function reads, the definition and its checks) is
// @kb/spec's; here is the framework's side: the context a `process` runs with and the component.
export type {
  GemmStage,
  MathStage,
  StageEngineArray,
  StageEngineKind,
  StageTiming,
  TileWork,
  TileWorkOf,
} from "@kb/spec";
export { gemmWork, mathWork } from "@kb/spec";

/**
 * What a multi-step `process` gets besides the token, as the framework gives it: the contract's
 * context plus the engine's `Environment` (a resource request, any DES event), the machine, all
 * the engine's counters and the component itself.
 */
export interface StageEngineContext<P, St> extends SpecStageEngineContext<P, St> {
  /** The simulation environment: yield `env.timeout(ns)`, a resource request, any DES event. */
  readonly env: Environment;
  /** The machine: other components (`machine.component(id)`), `machine.shared(key, make)`. */
  readonly machine: Machine;
  /** This engine's counters (add to `bytes` or `flops` if the defaults are not what you count). */
  readonly stats: ComponentStats;
  /** The component itself. */
  readonly component: StageEngine<P, St>;
}

/**
 * A stage engine's declaration on the framework ({@link defineStageEngine} of `@kb/components`):
 * the contract's, whose `process` receives the framework's tile token and context.
 */
export interface StageEngineDefinition<K extends StageEngineKind, S extends z.ZodType, St = undefined>
  extends Omit<SpecStageEngineDefinition<K, S, St>, "process"> {
  /**
   * Multi-step timing, instead of `timing`: a generator yielding DES events
   * (`yield context.env.timeout(ns)`); the stage ends when it returns.
   */
  process?(token: TileToken & TileWorkOf<K>, context: StageEngineContext<z.output<S>, St>): StageWork;
}

/** Any stage engine's definition, as the component holds it. */
type AnyStageEngine<St> = StageEngineDefinition<StageEngineKind, z.ZodType, St>;

/**
 * Declares a PE stage engine on the framework: `@kb/spec`'s {@link specDefineStageEngine} (the
 * same checks and messages), adapted at once into a {@link ComponentDefinition} (a
 * {@link StageEngine} per node). A plug-in writes `defineStageEngine` of `@kb/spec` instead (plain
 * data the registry adapts the same way); this one is for engines whose `process` needs the
 * framework's context (the machine, resources).
 */
export function defineStageEngine<K extends StageEngineKind, S extends z.ZodType, St = undefined>(
  definition: StageEngineDefinition<K, S, St>,
): ComponentDefinition<S> {
  const spec = specDefineStageEngine(definition as unknown as SpecStageEngineDefinition<K, S, St>);
  return stageEngineComponentDefinition(spec) as ComponentDefinition<S>;
}

/**
 * The framework's component definition of a stage engine's plain definition (what the registry
 * registers for a plug-in's `defineStageEngine` of `@kb/spec`).
 */
export function stageEngineComponentDefinition(definition: StageEngineSpec): ComponentDefinition {
  const spec = definition as unknown as AnyStageEngine<unknown>;
  return adaptedDefinition(definition, (context, params) =>
    spec.array === undefined
      ? new StageEngine(context, params, spec)
      : new ArrayStageEngine(context, params, spec, spec.array(params)),
  );
}

/**
 * The component of a {@link defineStageEngine} definition: checks each message is a stage of its
 * kind, runs the timing (on the compute slot when it takes one) and keeps the counters.
 */
export class StageEngine<P = unknown, St = unknown> extends Component<P> {
  /** The instance state (`init`). */
  readonly state: St;
  private readonly spec: AnyStageEngine<St>;
  private readonly stages: readonly StageType[];
  private readonly usesSlot: boolean;
  private slot: Resource | null = null;
  private context: StageEngineContext<P, St> | null = null;

  constructor(context: ComponentContext, params: P, spec: AnyStageEngine<St>) {
    const depth = spec.queueDepth?.(params) ?? (params as { queue_depth?: unknown }).queue_depth;
    super(context, params, {
      lanes: spec.kind === "pe_fetch_store" ? 2 : 1,
      queueDepth: typeof depth === "number" ? depth : 4,
    });
    this.spec = spec;
    this.stages = STAGE_ENGINE_STAGES[spec.kind];
    this.usesSlot = spec.computeSlot ?? spec.kind !== "pe_fetch_store";
    this.state = spec.init?.(params) as St;
  }

  override init(): void {
    if (this.usesSlot) this.slot = computeSlotOf(this);
  }

  /** Fetch and store on separate lanes (one queue for both deadlocks; see PE_FETCH_STORE). */
  override laneOf(message: Message): number {
    return this.lanes.length > 1 && (message as TileToken).stage.type === "store" ? 1 : 0;
  }

  override laneName(index: number): string {
    return this.lanes.length > 1 ? (index === 1 ? "store" : "fetch") : String(index);
  }

  override peak(): ComponentPeak {
    return this.spec.peak?.(this.params) ?? {};
  }

  /** The definition's `stats(state, params)` (none without one). */
  override modelStats(): readonly ModelStat[] {
    return this.spec.stats?.(this.state, this.params) ?? [];
  }

  process(message: Message): StageWork | Event<unknown> | null {
    if (!(message instanceof TileToken) || !this.stages.includes(message.stage.type)) {
      throw new KbError(
        "MACHINE_INVARIANT",
        `${this.kind} ${this.impl} received "${message.label}"; it services ${this.stages.join(" and ")} stages of tile tokens.`,
        { context: { nodeId: this.id, simTimeNs: this.env.now } },
      );
    }
    const spec = this.spec;
    if (spec.timing !== undefined) {
      const result = spec.timing(message as never, this.params);
      const ns = typeof result === "number" ? result : result?.ns;
      if (typeof ns !== "number" || !Number.isFinite(ns) || ns < 0) throw this.badTiming(message, result);
      this.stats.flops += (typeof result === "number" ? undefined : result.flops) ?? message.flops;
      this.stats.bytes += (typeof result === "number" ? undefined : result.bytes) ?? message.bytes;
      this.charged(ns);
      if (this.slot !== null) return onSlot(this.env, this.slot, ns);
      return ns > 0 ? this.env.timeout(ns) : null;
    }
    this.stats.flops += message.flops;
    this.stats.bytes += message.bytes;
    const work = (spec.process as NonNullable<typeof spec.process>)(message as never, this.processContext());
    return this.slot === null ? work : holdingSlot(this.slot, work);
  }

  /** Called with each stage's time (the PE_GEMM with an array counts its cycles). */
  protected charged(_ns: number): void {}

  private processContext(): StageEngineContext<P, St> {
    if (this.context === null) {
      this.context = {
        env: this.env,
        params: this.params,
        id: this.id,
        machine: this.machine,
        stats: this.stats,
        state: this.state,
        component: this,
      };
    }
    return this.context;
  }

  private badTiming(token: TileToken, result: unknown): KbError {
    // A plug-in's impl is "package:name"; a built-in's is a bare name.
    const who = this.impl.includes(":") ? "plug-in" : `${this.kind} impl`;
    return new KbError(
      "MACHINE_INVARIANT",
      `${who} ${this.impl} (${this.id}) returned ${returnedValue(result)} from timing() at t=${formatSimTime(this.env.now)} ns for ${token.label} (${token.op}); it must return a time in ns, a finite number >= 0 (or { ns, flops?, bytes? }).`,
      { context: { nodeId: this.id, simTimeNs: this.env.now } },
    );
  }
}

/** A PE_GEMM stage engine that states its MAC array: `GemmTiming` from its timing function. */
class ArrayStageEngine<P, St> extends StageEngine<P, St> implements GemmTiming {
  readonly macRows: number;
  readonly macCols: number;
  readonly freqGhz: number;
  arrayCycles = 0;
  private readonly timing: NonNullable<AnyStageEngine<St>["timing"]>;

  constructor(context: ComponentContext, params: P, spec: AnyStageEngine<St>, array: StageEngineArray) {
    super(context, params, spec);
    this.macRows = array.rows;
    this.macCols = array.cols;
    this.freqGhz = array.freqGhz;
    this.timing = spec.timing as NonNullable<typeof spec.timing>;
    if (!(this.macRows > 0 && this.macCols > 0 && this.freqGhz > 0)) {
      throw new KbError(
        "COMPONENT_INVALID_DEFINITION",
        `${this.impl}: array(params) must give rows, cols and freqGhz > 0, got ${JSON.stringify(array)}.`,
        { context: { nodeId: this.id } },
      );
    }
  }

  gemmCycles(m: number, n: number, k: number, dtype: string): number {
    const result = this.timing(gemmWork(m, n, k, dtype) as never, this.params);
    return (typeof result === "number" ? result : result.ns) * this.freqGhz;
  }

  protected override charged(ns: number): void {
    this.arrayCycles += ns * this.freqGhz;
  }

  /** `spec.peak`, else 2 x rows x cols x freqGhz. */
  override peak(): ComponentPeak {
    const stated = super.peak();
    return stated.flopsPerNs !== undefined || stated.bytesPerNs !== undefined
      ? stated
      : { flopsPerNs: 2 * this.macRows * this.macCols * this.freqGhz };
  }
}

/** `ns` on the compute slot: wait for it, hold it, release it. */
function* onSlot(env: Environment, slot: Resource, ns: number): StageWork {
  const request: Request = slot.request();
  yield request;
  if (ns > 0) yield env.timeout(ns);
  slot.release(request);
}

/** A `process` run while holding the compute slot. */
function* holdingSlot(slot: Resource, work: StageWork): StageWork {
  const request: Request = slot.request();
  yield request;
  try {
    yield* work;
  } finally {
    slot.release(request);
  }
}

/**
 * A value a plug-in returned, as a message shows it: NaN and Infinity by name (JSON would print
 * them as null), objects as JSON with their non-finite numbers named too.
 */
function returnedValue(value: unknown): string {
  if (typeof value === "number" || value === undefined) return String(value);
  const json = JSON.stringify(value, (_key, inner: unknown) =>
    typeof inner === "number" && !Number.isFinite(inner) ? `\u0000${inner}\u0000` : inner,
  );
  return json === undefined ? String(value) : json.replace(/"\\u0000(.*?)\\u0000"/g, "$1");
}
