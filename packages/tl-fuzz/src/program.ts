// A random kernel of the differential tester: host tensors, a grid, and a list of steps a kernel
// runs on every block of rows. Programs are built from raw choices (numbers a property-based
// generator draws and shrinks) by `buildProgram`, which always yields a valid program: a choice
// that does not fit is taken modulo what fits, or dropped, so a shrunk choice list is still a
// program.

import type { Dtype as KernelDtype } from "@kb/spec";
import type { AtomicOp, BinaryOp, BitOp, LibdeviceOp, UnaryOp } from "./reference/index.js";
import { isNarrow } from "./reference/narrow-float.js";

/**
 * The element types a program uses: the kernels' (@kb/spec) but booleans, which only masks and
 * comparisons hold. u32 values come from `tl.randint` only (not drawn for inputs).
 */
export type Dtype = Exclude<KernelDtype, "i1">;

export const FLOAT_DTYPES: readonly Dtype[] = ["f32", "f16", "bf16"];
export const DTYPES: readonly Dtype[] = ["f32", "f16", "bf16", "i8", "i32"];
/** What a cast step converts to: {@link DTYPES} and the fp8 and fp4 dtypes (saturating, README). */
export const CAST_DTYPES: readonly Dtype[] = [...DTYPES, "f8e4m3", "f8e5m2", "f4e2m1"];

export function isFloat(dtype: Dtype): boolean {
  return dtype === "f32" || dtype === "f16" || dtype === "bf16" || isNarrow(dtype);
}

/** Rows of a value: those of the block being processed (the last block may be shorter), or fixed. */
export type Rows = "block" | number;

/**
 * Every element is a multiple of 2^grain with |x| <= bound (or NaN/Inf where `special`): what a
 * GEMM needs to sum exactly in f32, so that phase 2 (f32 accumulation, any order) and the
 * evaluator (f64) give the same bits.
 */
export interface Exact {
  readonly grain: number;
  readonly bound: number;
}

/** The type of a value a step produces. */
export interface ValueType {
  readonly rows: Rows;
  readonly cols: number;
  readonly dtype: Dtype;
  readonly exact: Exact | null;
}

/** A device tensor the host creates and fills. */
export interface InputTensor {
  readonly name: string;
  /** Rows, cols as stored (a transposed weight is stored [N, K]). */
  readonly shape: readonly [number, number];
  readonly dtype: Dtype;
  /** Split into blocks of rows (`R` rows), or read whole (a weight). */
  readonly split: boolean;
  /** Stored transposed: the kernel reads it through `tl.trans`. */
  readonly transposed: boolean;
  readonly values: readonly number[];
}

/** A device tensor the kernel writes (every element, block by block). */
export interface OutputTensor {
  readonly name: string;
  readonly shape: readonly [number, number];
  readonly dtype: Dtype;
  /** Rows each block writes: its rows (`block`) or one row per block. */
  readonly rowsPerBlock: "block" | 1;
  /**
   * The values the host fills it with (row-major) before the launch: the target of atomics or of
   * scatters to other blocks' rows, whose untouched elements keep them. Without it the kernel
   * writes every element.
   */
  readonly init?: readonly number[];
}

// Random kernels use the elementwise ops the independent evaluator knows, in its order (a new op
// of the op table is fuzzed once reference/elementwise.ts evaluates it).
export { BINARY_OPS, type BinaryOp, UNARY_OPS, type UnaryOp } from "./reference/index.js";

/** One epilogue step of a composite GEMM. */
export interface EpilogueStep {
  readonly op: UnaryOp | BinaryOp;
  readonly scope: "k_tile" | "output_tile";
  readonly scalar?: number;
}

/** A step of the per-block kernel body. Value operands are indices of earlier value steps. */
export type Step =
  | { readonly kind: "load"; readonly input: number; readonly col0: number; readonly cols: number }
  | { readonly kind: "full"; readonly like: number; readonly value: number }
  | { readonly kind: "unary"; readonly op: UnaryOp; readonly x: number }
  | { readonly kind: "libdevice"; readonly op: LibdeviceOp; readonly x: number }
  | {
      readonly kind: "binary";
      readonly op: BinaryOp;
      readonly a: number;
      readonly b: number | { scalar: number };
    }
  | { readonly kind: "inplace"; readonly op: BinaryOp; readonly acc: number; readonly x: number }
  | { readonly kind: "fma"; readonly a: number; readonly b: number; readonly c: number }
  | { readonly kind: "where"; readonly cond: number; readonly a: number; readonly b: number }
  | { readonly kind: "clamp"; readonly x: number; readonly lo: number; readonly hi: number }
  | { readonly kind: "reduce"; readonly op: "sum" | "max" | "min"; readonly x: number; readonly axis: 0 | 1 }
  | { readonly kind: "softmax"; readonly x: number; readonly axis: 0 | 1 }
  /** `tl.cumsum(x, axis)` / `tl.cumprod(x, axis)` (scan-steps.ts): the shape kept. */
  | { readonly kind: "scan"; readonly op: "cumsum" | "cumprod"; readonly x: number; readonly axis: 0 | 1 }
  | { readonly kind: "cast"; readonly x: number; readonly dtype: Dtype }
  | { readonly kind: "row"; readonly x: number; readonly which: "first" | "last" }
  | {
      readonly kind: "dot";
      readonly a: number;
      /** A whole weight load (its input stored [K, N], or [N, K] when transposed). */
      readonly b: number;
      readonly acc: number | "zeros" | null;
      readonly outDtype: Dtype | null;
    }
  | { readonly kind: "store"; readonly x: number; readonly output: number }
  /** `tl.dotScaled` of loads (scaled-steps.ts): `b` a whole weight load as `dot`'s, scales i8 loads. */
  | {
      readonly kind: "dotScaled";
      readonly a: number;
      readonly aScale: number;
      readonly b: number;
      readonly bScale: number;
      /** A's format. */
      readonly format: "e4m3" | "e5m2" | "e2m1";
      /** B's format (the same as A's, or another narrow format: a mixed-format GEMM). */
      readonly bFormat: "e4m3" | "e5m2" | "e2m1";
      readonly acc: "zeros" | null;
      /** nvfp4 (e2m1 x e2m1): f8e4m3 scales per 16 along K; absent: e8m0 bytes per 32 (i8 loads). */
      readonly scaleDtype?: "f8e4m3";
    }
  /** Data-dependent control flow: `x.data.getFlat(0) > 0 ? then(y) : otherwise(y)` (x is loaded). */
  | {
      readonly kind: "branch";
      readonly x: number;
      readonly y: number;
      readonly then: UnaryOp;
      readonly otherwise: UnaryOp;
    }
  /**
   * A gather (`tl.load` with `offsets`): row `r` of the block, column `j` is the split input's
   * element `(b * BR + r) * C + idx[j]`, `idx` the loaded i32 input `index` ([1, k]).
   */
  | { readonly kind: "gather"; readonly input: number; readonly index: number }
  /** A load into a `tl.empty` buffer (`{ out }`). */
  | { readonly kind: "loadInto"; readonly input: number }
  | {
      readonly kind: "compositeGemm";
      readonly a: number;
      readonly b: number;
      readonly output: number;
      readonly tile: readonly [number, number, number] | null;
      readonly epilogue: readonly EpilogueStep[];
      readonly outDtype: Dtype | null;
    }
  /**
   * A misuse the run must refuse: `tl.<op>` of the accumulator the dot of step `dot` consumed,
   * instead of the dot's result. Expected: `TL_INVALID_CALL` naming that dot. Always the last step
   * (the kernel stops there).
   */
  | { readonly kind: "useConsumed"; readonly dot: number; readonly op: UnaryOp }
  /** An integer bit op (`tl.and`, `tl.shl`, ...) of `a` (i8 or i32) and a value or integer. */
  | {
      readonly kind: "bits";
      readonly op: BitOp;
      readonly a: number;
      readonly b: number | { scalar: number } | null;
    }
  /** `tl.sum(x)` etc. without an axis: every axis reduced, shape [1, 1]. */
  | { readonly kind: "reduceAll"; readonly op: "sum" | "max" | "min"; readonly x: number }
  /**
   * `tl.rand(seed, offsets)` / `tl.randn`: f32 [rows, cols] of the block, element (r, j) at offset
   * (b * BR + r) * cols + j.
   */
  | {
      readonly kind: "random";
      readonly op: "rand" | "randn" | "randint";
      readonly seed: number;
      readonly cols: number;
    }
  /**
   * Triton's shape calls on a 2-D value, kept 2-D by reshapes: `join` / `cat` of `a` and `b` (one
   * type) reshaped to `[rows, 2 * cols]`; `split` of `a` reshaped to `[rows, cols / 2, 2]` (its
   * `half`); `permute` of that by `[0, 2, 1]`, reshaped back to `[rows, cols]`.
   */
  | {
      readonly kind: "shape";
      readonly op: "join" | "cat" | "split" | "permute";
      readonly a: number;
      readonly b: number;
      readonly half: 0 | 1;
    }
  /** A gather as `gather`, with the column mask `j < on` and `other` (idx past `on`: out of range). */
  | {
      readonly kind: "maskedGather";
      readonly input: number;
      readonly index: number;
      readonly on: number;
      readonly other: number;
    }
  /**
   * A scatter (`tl.store` with `offsets`) of `x` to `output`: (b * BR + r) * C + idx[j]. With `on`,
   * a plain store of `x` first, then the scatter masked by `j < on` (idx past `on`: out of range).
   */
  | {
      readonly kind: "scatter";
      readonly x: number;
      readonly index: number;
      readonly output: number;
      readonly on: number | null;
    }
  /**
   * A tile wider than the row: `[rows, block]` of a split input of `C < block` columns loaded with
   * `{ stride: C, mask: arange(0, block) < C, other }`.
   */
  | { readonly kind: "wideLoad"; readonly input: number; readonly block: number; readonly other: number }
  /**
   * `tl.atomic<Op>(target, val, { offsets, mask })` (`cmp` for cas), val of the block's `[rows, C]`
   * (a value or a number). `shared`: element (r, j) at row `g % M` of the `[M, C]` target, column
   * j, `g` the split i32 input `index`'s row (loaded ids) or the global row `b * BR + r` (index
   * null): calls of every program (PE) on common elements, only ops whose final value is the same
   * in any order. `private`: element (r, j) at the block's own row, column `idx[j]` of the `[1, C]`
   * input `index` (repeats: one call's elements in row-major order); the old values are the step's
   * value. Mask `j < on`.
   */
  | {
      readonly kind: "atomic";
      readonly op: AtomicOp;
      readonly target: number;
      readonly val: number | { scalar: number };
      readonly cmp: number | null;
      readonly rows: "shared" | "private";
      readonly index: number | null;
      readonly on: number | null;
    }
  /**
   * A scatter of `x` ([rows, C]) to rows of other blocks: element (r, j) at row `ids[g]` (the split
   * i32 input `index`, a row owned by this block alone, repeats in the block: the later element
   * wins), column `idx[j]` of the `[1, C]` input `columns`; mask `j < on`. The target has `init`.
   */
  | {
      readonly kind: "rowScatter";
      readonly x: number;
      readonly target: number;
      readonly index: number;
      readonly columns: number;
      readonly on: number | null;
    }
  /**
   * In a second launch after the kernel: a gather of rows `ids[g] % S` (the split i32 input
   * `index`) of output `source` ([S, C], written by any program of the first launch) into `result`'s
   * block rows; mask `j < on` with `other`.
   */
  | {
      readonly kind: "gatherBack";
      readonly source: number;
      readonly index: number;
      readonly result: number;
      readonly on: number | null;
      readonly other: number;
    }
  | {
      readonly kind: "compositeMath";
      readonly op: UnaryOp | BinaryOp | "sum" | "max" | "min" | "softmax";
      readonly inputs: readonly number[];
      readonly scalar: number | null;
      readonly output: number;
    };

/** A kernel and its host program. */
export interface Program {
  /** Rows of the split tensors. */
  readonly rows: number;
  readonly blockRows: number;
  /** PEs of the grid (cube 0 of one SIP). */
  readonly pes: number;
  /** Persistent (`for (b = pid; b < nBlocks; b += nprog)`) or one block per program. */
  readonly persistent: boolean;
  readonly inputs: readonly InputTensor[];
  readonly outputs: readonly OutputTensor[];
  readonly steps: readonly Step[];
  /** The type of each step's value (null for steps without one: stores, composites). */
  readonly types: readonly (ValueType | null)[];
}

/** The step of `program` the run must refuse (a use of a consumed accumulator), or null. */
export function expectedRefusal(program: Program): Extract<Step, { kind: "useConsumed" }> | null {
  const last = program.steps.at(-1);
  return last?.kind === "useConsumed" ? last : null;
}

export function blockCount(program: Pick<Program, "rows" | "blockRows">): number {
  return Math.ceil(program.rows / program.blockRows);
}

/** The concrete rows of a value in block `b`. */
export function rowsIn(program: Program, rows: Rows, b: number): number {
  return rows === "block" ? Math.min(program.blockRows, program.rows - b * program.blockRows) : rows;
}
