import type * as z from "zod";
import {
  type ComponentPeak,
  type ContractStamp,
  checkDefinitionBase,
  definitionFailure,
  definitionWhere,
  type ModelDefinitionBase,
  type SimEnvironment,
  type SimEvent,
  stamp,
} from "./model-definition.js";
import type { ModelStat } from "./model-stats.js";

/** The stages a tile passes through (ADR-0021 D2). */
export type StageType = "dma_read" | "fetch" | "gemm" | "math" | "store" | "dma_write";

/**
 * The PE engines {@link defineStageEngine} can time: PE_GEMM (GEMM stages), PE_MATH (MATH
 * stages) and PE_FETCH_STORE (fetch and store stages, on two lanes).
 */
export type StageEngineKind = "pe_gemm" | "pe_math" | "pe_fetch_store";

/** The kinds a stage engine can time, and the stages each services. */
export const STAGE_ENGINE_STAGES: Readonly<Record<StageEngineKind, readonly StageType[]>> = {
  pe_gemm: ["gemm"],
  pe_math: ["math"],
  pe_fetch_store: ["fetch", "store"],
};

/** A GEMM stage's work: `C[m x n] += A[m x k] B[k x n]`, inputs of `dtype`. */
export interface GemmStage {
  readonly type: "gemm";
  readonly m: number;
  readonly n: number;
  readonly k: number;
  readonly dtype: string;
  /**
   * B's input dtype when it differs from `dtype` (a mixed-format `tl.dotScaled`): the built-in
   * PE_GEMMs stream at the slower of the two dtypes' rates. Absent: both are `dtype`.
   */
  readonly dtypeB?: string;
  /**
   * A scaled GEMM's (`tl.dotScaled`) blocks of scales along k (`ceil(k / 32)` e8m0, `ceil(k / 16)` nvfp4's f8e4m3): one more
   * streamed step each in the built-in PE_GEMMs; absent for a plain GEMM.
   */
  readonly scaleBlocks?: number;
}

/** A MATH stage's work: `op` on `elements` elements of `dtype`. */
export interface MathStage {
  readonly type: "math";
  readonly op: string;
  readonly elements: number;
  readonly dtype: string;
  /** Length of the reduced axis for reductions (sum, max, min, softmax); 0 for elementwise. */
  readonly reduceLength: number;
}

/**
 * What a timing function reads of a tile token: the work of the stage the token is in.
 * {@link gemmWork} and {@link mathWork} build one for a test.
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

/** The counters of a stage engine a multi-step `process` may add to. */
export interface StageCounters {
  /** Arithmetic operations (default per stage: the token's `flops`). */
  flops: number;
  /** Bytes moved (default per stage: the token's `bytes`). */
  bytes: number;
}

/**
 * What a multi-step `process` yields: simulation events (`context.env.timeout(ns)`); the stage
 * ends when the generator returns.
 */
export type StageSteps = Generator<SimEvent<unknown>, void, unknown>;

/** What a multi-step `process` gets besides the token. */
export interface StageEngineContext<P, St> {
  /** The simulation's clock: yield `env.timeout(ns)` to let simulated time pass. */
  readonly env: SimEnvironment;
  /** The validated params. */
  readonly params: P;
  /** The topology node id (`sip0.cube0.pe3.pe_gemm`). */
  readonly id: string;
  /** This engine's counters (add to `bytes` or `flops` if the defaults are not what you count). */
  readonly stats: StageCounters;
  /** This instance's state, made by the definition's `init` (undefined without one). */
  readonly state: St;
}

/** A stage engine's declaration, for {@link defineStageEngine}. Give `timing` or `process`. */
export interface StageEngineDefinition<
  K extends StageEngineKind = StageEngineKind,
  S extends z.ZodType = z.ZodType,
  St = undefined,
> extends ModelDefinitionBase<S> {
  /** `"pe_gemm"`, `"pe_math"` or `"pe_fetch_store"`. */
  readonly kind: K;
  /** A stage engine times one kind. */
  readonly alsoKinds?: never;
  /**
   * The stage's time, ns, as a function of the token's work and the params (or a
   * {@link StageTiming} to count flops or bytes of your own). The simple case.
   */
  timing?(token: TileWorkOf<K>, params: z.output<S>): number | StageTiming;
  /** Makes the per-instance state a `process` keeps between tokens (`context.state`). */
  init?(params: z.output<S>): St;
  /**
   * Multi-step timing, instead of `timing`: a generator yielding simulation events
   * (`yield context.env.timeout(ns)`); the stage ends when it returns.
   */
  process?(token: TileWorkOf<K>, context: StageEngineContext<z.output<S>, St>): StageSteps;
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
  array?(params: z.output<S>): StageEngineArray;
  /** The best rate, for rooflines (default: from `array`, else unknown). */
  peak?(params: z.output<S>): ComponentPeak;
  /**
   * The counters the engine keeps, read once after the run into `components[].stats` of the
   * results: count in the state (`init`, then `context.state` in `process`, or a closure) and
   * publish here. Default: none.
   */
  stats?(state: St, params: z.output<S>): readonly ModelStat[];
  /** Inbox capacity per lane (default: the params' `queue_depth`, else 4). */
  queueDepth?(params: z.output<S>): number;
}

/** What {@link defineStageEngine} returns: the checked definition as plain data, for the framework to adapt. */
export type StageEngineSpec<
  K extends StageEngineKind = StageEngineKind,
  S extends z.ZodType = z.ZodType,
  St = unknown,
> = StageEngineDefinition<K, S, St> & ContractStamp<"stage_engine">;

/**
 * Declares a PE stage engine (PE_GEMM, PE_MATH, PE_FETCH_STORE) as its timing alone. Returns the
 * definition as plain data ({@link StageEngineSpec}); the framework (`@kb/components`) does the
 * rest: the worker loop and inbox, the PE's compute slot (PE_GEMM and PE_MATH), the stage check
 * (a PE_GEMM gets GEMM stages only), `stats` (busy, ops, flops, bytes), `GemmTiming` for a
 * PE_GEMM that states its `array`, and the hand-over to the next stage.
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
 * or, for timing in several steps (each `yield` waits for a simulation event):
 *
 * ```ts
 *   process: function* (token, { env, params }) {
 *     yield env.timeout(params.setup_ns);
 *     yield env.timeout(token.elements / params.lanes);
 *   },
 * ```
 *
 * Throws `COMPONENT_INVALID_DEFINITION` (`defineStageEngine("impl"): ...`) for another kind, both
 * or neither of `timing` and `process`, `array` on an engine that is not a PE_GEMM with `timing`,
 * or a malformed name, description, params or counters. A timing function that returns a negative
 * or non-finite time fails the run with `MACHINE_INVARIANT`, naming the impl.
 */
export function defineStageEngine<K extends StageEngineKind, S extends z.ZodType, St = undefined>(
  definition: StageEngineDefinition<K, S, St>,
): StageEngineSpec<K, S, St> {
  checkStageEngine(definition);
  return stamp(definition, "stage_engine");
}

/** The checks of {@link defineStageEngine} (also run on a loaded plug-in's data). @internal */
export function checkStageEngine(definition: unknown): void {
  const where = definitionWhere("defineStageEngine", definition);
  const fail = definitionFailure(where);
  if (definition === null || typeof definition !== "object") fail("expects an object.");
  const d = definition as Partial<StageEngineDefinition<StageEngineKind, z.ZodType, unknown>>;
  if (typeof d.kind !== "string" || !Object.hasOwn(STAGE_ENGINE_STAGES, d.kind)) {
    fail(
      `kind must be one of ${Object.keys(STAGE_ENGINE_STAGES).join(", ")}, got ${JSON.stringify(d.kind)}; other components are written with defineMemoryModel, defineForwardingModel (or @kb/components' defineComponent).`,
    );
  }
  if (d.alsoKinds !== undefined) fail("alsoKinds: a stage engine times one kind.");
  const hasTiming = typeof d.timing === "function";
  const hasProcess = typeof d.process === "function";
  if (hasTiming === hasProcess) {
    fail(
      "give either timing(token, params) => ns or process: function* (token, context) {...}, not both or neither.",
    );
  }
  if (d.array !== undefined && (d.kind !== "pe_gemm" || !hasTiming)) {
    fail("array states a PE_GEMM's MAC array; it needs kind pe_gemm and a timing function.");
  }
  for (const hook of ["init", "array", "peak", "queueDepth"] as const) {
    if (d[hook] !== undefined && typeof d[hook] !== "function") fail(`${hook}(params) must be a function.`);
  }
  if (d.stats !== undefined && typeof d.stats !== "function") {
    fail("stats(state, params) must be a function returning [{ name, unit, description, total, perPort? }].");
  }
  checkDefinitionBase(definition, where);
}
