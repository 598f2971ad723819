import type { Environment, Event, Request, Resource } from "@kb/des";
import { formatSimTime, KbError } from "@kb/errors";
import type * as z from "zod";
import {
  Component,
  type ComponentContext,
  type ComponentPeak,
  type ComponentStats,
  type StageWork,
} from "./component.js";
import { type ComponentDefinition, defineComponent } from "./define.js";
import type { GemmTiming } from "./gemm-timing.js";
import type { Machine } from "./machine.js";
import { type Message, type StageParams, type StageType, TileToken } from "./message.js";
import type { ModelStat, ModelStatInfo } from "./model-stats.js";
import { computeSlotOf } from "./pe-support.js";

/** The kinds a stage engine can time, and the stages each services. */
const STAGES: Readonly<Record<StageEngineKind, readonly StageType[]>> = {
  pe_gemm: ["gemm"],
  pe_math: ["math"],
  pe_fetch_store: ["fetch", "store"],
};

/**
 * The PE engines {@link defineStageEngine} can time: PE_GEMM (GEMM stages), PE_MATH (MATH
 * stages) and PE_FETCH_STORE (fetch and store stages, on two lanes).
 */
export type StageEngineKind = "pe_gemm" | "pe_math" | "pe_fetch_store";

/** A GEMM stage's work: `C[m x n] += A[m x k] B[k x n]`, inputs of `dtype`. */
export type GemmStage = Extract<StageParams, { readonly type: "gemm" }>;

/** A MATH stage's work: `op` on `elements` elements of `dtype`; `reduceLength` 0 unless it reduces. */
export type MathStage = Extract<StageParams, { readonly type: "math" }>;

/**
 * What a timing function reads of a tile token: the work of the stage the token is in.
 * `TileToken` has these members; {@link gemmWork} and {@link mathWork} build one for a test.
 */
export interface TileWork {
  /** `"gemm"`, `"math"`, `"fetch"`, `"store"`, ... */
  readonly stageType: StageType;
  /** `"gemm"`, the MATH op (`"exp"`, `"add+relu"` for a fused epilogue), else the stage type. */
  readonly op: string;
  /** A GEMM stage's `{ m, n, k, dtype }`, else null. */
  readonly gemm: GemmStage | null;
  /** A MATH stage's `{ op, elements, dtype, reduceLength }`, else null. */
  readonly math: MathStage | null;
  /** Input dtype of a GEMM or MATH stage, null for fetch and store. */
  readonly dtype: string | null;
  /** MATH elements; GEMM outputs `m x n`; 0 for fetch and store. */
  readonly elements: number;
  /** Bytes a fetch or store moves; 0 for GEMM and MATH. */
  readonly bytes: number;
  /** `2 m n k` for a GEMM, `elements x` ops for MATH, 0 otherwise (what `stats.flops` counts by default). */
  readonly flops: number;
}

/** The {@link TileWork} an engine of kind `K` gets: a PE_GEMM's always has `gemm`, a PE_MATH's `math`. */
export type TileWorkOf<K extends StageEngineKind> = K extends "pe_gemm"
  ? TileWork & {
      readonly stageType: "gemm";
      readonly gemm: GemmStage;
      readonly math: null;
      readonly dtype: string;
    }
  : K extends "pe_math"
    ? TileWork & {
        readonly stageType: "math";
        readonly math: MathStage;
        readonly gemm: null;
        readonly dtype: string;
      }
    : TileWork & { readonly stageType: "fetch" | "store"; readonly gemm: null; readonly math: null };

/** The work of a GEMM stage, as a timing function sees it (for tests, and `GemmTiming`). */
export function gemmWork(m: number, n: number, k: number, dtype: string): TileWorkOf<"pe_gemm"> {
  return {
    stageType: "gemm",
    op: "gemm",
    gemm: { type: "gemm", m, n, k, dtype },
    math: null,
    dtype,
    elements: m * n,
    bytes: 0,
    flops: 2 * m * n * k,
  };
}

/** The work of a MATH stage, as a timing function sees it (for tests). */
export function mathWork(
  op: string,
  elements: number,
  dtype: string,
  reduceLength = 0,
): TileWorkOf<"pe_math"> {
  return {
    stageType: "math",
    op,
    gemm: null,
    math: { type: "math", op, elements, dtype, reduceLength },
    dtype,
    elements,
    bytes: 0,
    flops: elements * op.split("+").length,
  };
}

/** What a timing function may return instead of a bare number of ns. */
export interface StageTiming {
  /** The stage's time, ns (>= 0). */
  readonly ns: number;
  /** Arithmetic operations to count in `stats.flops` (default: the token's `flops`). */
  readonly flops?: number;
  /** Bytes to count in `stats.bytes` (default: the token's `bytes`). */
  readonly bytes?: number;
}

/** The MAC array of a PE_GEMM stage engine, for `GemmTiming` (`kb probe`, array utilisation). */
export interface StageEngineArray {
  /** MAC array rows. */
  readonly rows: number;
  /** MAC array columns. */
  readonly cols: number;
  /** Clock, GHz: cycles = ns x freqGhz. */
  readonly freqGhz: number;
}

/** What a multi-step `process` gets besides the token. */
export interface StageEngineContext<P, St> {
  /** The simulation environment: yield `env.timeout(ns)`, a resource request, any DES event. */
  readonly env: Environment;
  /** The validated params. */
  readonly params: P;
  /** The topology node id (`sip0.cube0.pe3.pe_gemm`). */
  readonly id: string;
  /** The machine: other components (`machine.component(id)`), `machine.shared(key, make)`. */
  readonly machine: Machine;
  /** This engine's counters (add to `bytes` or `flops` if the defaults are not what you count). */
  readonly stats: ComponentStats;
  /** This instance's state, made by the definition's `init` (undefined without one). */
  readonly state: St;
  /** The component itself. */
  readonly component: StageEngine<P, St>;
}

/** A stage engine's declaration, for {@link defineStageEngine}. Give `timing` or `process`. */
export interface StageEngineDefinition<K extends StageEngineKind, S extends z.ZodType, St = undefined> {
  /** `"pe_gemm"`, `"pe_math"` or `"pe_fetch_store"`. */
  readonly kind: K;
  /** Implementation name, snake_case (`"systolic_gemm"`). */
  readonly impl: string;
  /** What it models and its formula, a sentence or two (shown by `kb components list`). */
  readonly description: string;
  /** The params schema, strict (`z.strictObject({...})`): an unknown key in a topology is an error. */
  readonly params: S;
  /** True when the uncontended timing is exactly a documented formula (`kb probe` then holds it to 1%). */
  readonly analytic?: boolean;
  /**
   * The stage's time, ns, as a function of the token's work and the params (or a
   * {@link StageTiming} to count flops or bytes of your own). The simple case.
   */
  readonly timing?: (token: TileWorkOf<K>, params: z.output<S>) => number | StageTiming;
  /** Makes the per-instance state a `process` keeps between tokens (`context.state`). */
  readonly init?: (params: z.output<S>) => St;
  /**
   * Multi-step timing, instead of `timing`: a generator yielding DES events
   * (`yield context.env.timeout(ns)`); the stage ends when it returns.
   */
  readonly process?: (
    token: TileToken & TileWorkOf<K>,
    context: StageEngineContext<z.output<S>, St>,
  ) => StageWork;
  /**
   * Whether each stage holds the PE's compute slot, shared by PE_GEMM and PE_MATH (ADR-0014 D4:
   * a GEMM and a MATH op of one PE never overlap). Default: true for `pe_gemm` and `pe_math`,
   * false for `pe_fetch_store`.
   */
  readonly computeSlot?: boolean;
  /**
   * A PE_GEMM's MAC array: given with `timing`, the engine states its timing (`GemmTiming`):
   * `gemmCycles(m, n, k, dtype)` = `timing(gemmWork(m, n, k, dtype))` x `freqGhz`, so `kb probe`
   * holds it to its formula and `kb run` reports its array utilisation. Default peak:
   * `2 x rows x cols x freqGhz` flops/ns.
   */
  readonly array?: (params: z.output<S>) => StageEngineArray;
  /** The best rate, for rooflines (default: from `array`, else unknown). */
  readonly peak?: (params: z.output<S>) => ComponentPeak;
  /**
   * The counters the engine keeps, read once after the run into `components[].stats` of the
   * results: count in the state (`init`, then `context.state` in `process`, or a closure) and
   * publish here. Default: none.
   */
  readonly stats?: (state: St, params: z.output<S>) => readonly ModelStat[];
  /** The counters `stats` publishes, for `kb components list` (default: none declared). */
  readonly counters?: readonly ModelStatInfo[];
  /** Inbox capacity per lane (default: the params' `queue_depth`, else 4). */
  readonly queueDepth?: (params: z.output<S>) => number;
}

/**
 * Declares a PE stage engine (PE_GEMM, PE_MATH, PE_FETCH_STORE) as its timing alone. The
 * framework does the rest: the worker loop and inbox, the PE's compute slot (PE_GEMM and
 * PE_MATH), the stage check (a PE_GEMM gets GEMM stages only), `stats` (busy, ops, flops, bytes),
 * `GemmTiming` for a PE_GEMM that states its `array`, and the hand-over to the next stage.
 *
 * ```ts
 * export const fastGemm = defineStageEngine({
 *   kind: "pe_gemm",
 *   impl: "fast_gemm",
 *   description: "A 64 x 64 MAC array: ceil(m/64) x ceil(n/64) x k cycles at freq_ghz.",
 *   params: z.strictObject({ freq_ghz: z.number().positive().default(1) }),
 *   timing: ({ gemm }, p) => (Math.ceil(gemm.m / 64) * Math.ceil(gemm.n / 64) * gemm.k) / p.freq_ghz,
 *   array: (p) => ({ rows: 64, cols: 64, freqGhz: p.freq_ghz }),
 * });
 * ```
 *
 * or, for timing in several steps (each `yield` waits for a DES event):
 *
 * ```ts
 *   process: function* (token, { env, params }) {
 *     yield env.timeout(params.setup_ns);
 *     yield env.timeout(token.elements / params.lanes);
 *   },
 * ```
 *
 * Throws `COMPONENT_INVALID_DEFINITION` for another kind, both or neither of `timing` and
 * `process`, or `array` on an engine that is not a PE_GEMM with `timing`. A timing function that
 * returns a negative or non-finite time fails the run with `MACHINE_INVARIANT`, naming the impl.
 */
export function defineStageEngine<K extends StageEngineKind, S extends z.ZodType, St = undefined>(
  definition: StageEngineDefinition<K, S, St>,
): ComponentDefinition<S> {
  const where = `defineStageEngine(${JSON.stringify(definition?.impl ?? "?")})`;
  const fail = (what: string): never => {
    throw new KbError("COMPONENT_INVALID_DEFINITION", `${where}: ${what}`);
  };
  if (definition === null || typeof definition !== "object") fail("expects an object.");
  if (!Object.hasOwn(STAGES, definition.kind)) {
    fail(
      `kind must be one of ${Object.keys(STAGES).join(", ")}, got ${JSON.stringify(definition.kind)}; other components are written with defineComponent (or defineMemoryModel).`,
    );
  }
  const hasTiming = typeof definition.timing === "function";
  const hasProcess = typeof definition.process === "function";
  if (hasTiming === hasProcess) {
    fail(
      "give either timing(token, params) => ns or process: function* (token, context) {...}, not both or neither.",
    );
  }
  if (definition.array !== undefined && (definition.kind !== "pe_gemm" || !hasTiming)) {
    fail("array states a PE_GEMM's MAC array; it needs kind pe_gemm and a timing function.");
  }
  if (definition.stats !== undefined && typeof definition.stats !== "function") {
    fail("stats(state, params) must be a function returning [{ name, unit, description, total, perPort? }].");
  }
  const spec = definition as unknown as StageEngineDefinition<StageEngineKind, z.ZodType, unknown>;
  return defineComponent({
    kind: definition.kind,
    impl: definition.impl,
    description: definition.description,
    params: definition.params,
    ...(definition.analytic === undefined ? {} : { analytic: definition.analytic }),
    ...(definition.counters === undefined ? {} : { counters: definition.counters }),
    create: (context, params) =>
      spec.array === undefined
        ? new StageEngine(context, params, spec)
        : new ArrayStageEngine(context, params, spec, spec.array(params)),
  } as ComponentDefinition<S>);
}

/**
 * The component of a {@link defineStageEngine} definition: checks each message is a stage of its
 * kind, runs the timing (on the compute slot when it takes one) and keeps the counters.
 */
export class StageEngine<P = unknown, St = unknown> extends Component<P> {
  /** The instance state (`init`). */
  readonly state: St;
  private readonly spec: StageEngineDefinition<StageEngineKind, z.ZodType, St>;
  private readonly stages: readonly StageType[];
  private readonly usesSlot: boolean;
  private slot: Resource | null = null;
  private context: StageEngineContext<P, St> | null = null;

  constructor(
    context: ComponentContext,
    params: P,
    spec: StageEngineDefinition<StageEngineKind, z.ZodType, St>,
  ) {
    const depth = spec.queueDepth?.(params) ?? (params as { queue_depth?: unknown }).queue_depth;
    super(context, params, {
      lanes: spec.kind === "pe_fetch_store" ? 2 : 1,
      queueDepth: typeof depth === "number" ? depth : 4,
    });
    this.spec = spec;
    this.stages = STAGES[spec.kind];
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
  private readonly timing: NonNullable<StageEngineDefinition<StageEngineKind, z.ZodType, St>["timing"]>;

  constructor(
    context: ComponentContext,
    params: P,
    spec: StageEngineDefinition<StageEngineKind, z.ZodType, St>,
    array: StageEngineArray,
  ) {
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
