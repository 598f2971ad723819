// The GEMMs of packages/tl/README.md ("dot", "composite(\"gemm\")"). Float products are summed
// exactly enough in f64 (in k order) and rounded to f32, where the machine sums in f32: the two
// differ by the f32 summation error, which the dtype tolerances are meant to cover for small
// operands and moderate K (see the README). Integer GEMMs are exact modulo 2^32.

import { checkDtype, type Dtype, invalid, isFloat, roundTo, wrap32 } from "./dtype.js";
import { applyBinary, applyUnary, isBinaryOp, isUnaryOp } from "./elementwise.js";
import { formatShape, fromRounded, type RefTensor } from "./tensor.js";

/** Options of {@link dot}. */
export interface DotOptions {
  /** The accumulator: `[M, N]` of the result dtype; the result is `acc + a @ b`. */
  readonly acc?: RefTensor;
  /** The result dtype (default: `acc`'s, else f32 for float inputs and i32 for integer ones). */
  readonly outDtype?: Dtype;
}

/** `[M, K, N]` of `a @ b`, checking 2-D operands of one dtype with matching inner dimensions. */
function gemmShape(call: string, a: RefTensor, b: RefTensor): [number, number, number] {
  if (a.shape.length !== 2 || b.shape.length !== 2 || a.shape[1] !== b.shape[0]) {
    throw invalid(call, `needs (M, K) x (K, N), got ${formatShape(a.shape)} x ${formatShape(b.shape)}.`);
  }
  if (a.dtype !== b.dtype) throw invalid(call, `operand dtypes differ: ${a.dtype} and ${b.dtype}.`);
  return [a.shape[0] as number, a.shape[1] as number, b.shape[1] as number];
}

/**
 * `sum over k in [k0, k1) of a[i, k] · b[k, j]`: for floats the f64 sum in k order rounded to
 * f32 (the accumulator's precision); for integers exact modulo 2^32.
 */
function partialSum(a: RefTensor, b: RefTensor, i: number, j: number, k0: number, k1: number): number {
  const k = a.shape[1] as number;
  const n = b.shape[1] as number;
  if (isFloat(a.dtype)) {
    let sum = 0;
    for (let p = k0; p < k1; p++) sum += (a.data[i * k + p] as number) * (b.data[p * n + j] as number);
    return Math.fround(sum);
  }
  let sum = 0;
  for (let p = k0; p < k1; p++)
    sum = wrap32(sum + Math.imul(a.data[i * k + p] as number, b.data[p * n + j] as number));
  return sum;
}

/** The accumulator dtype of a GEMM on `dtype` inputs: f32 for floats, i32 for integers. */
export function accumulatorDtype(dtype: Dtype): Dtype {
  return isFloat(dtype) ? "f32" : "i32";
}

/**
 * `tl.dot(a, b, { acc, outDtype })`: `[M, K] @ [K, N]`, accumulated in f32 (float inputs) or i32
 * (integer inputs, modulo 2^32), plus `acc` converted to the accumulator dtype, then rounded once
 * to the result dtype. A transposed operand is `transpose(x)` of the stored tensor.
 */
export function dot(a: RefTensor, b: RefTensor, options: DotOptions = {}): RefTensor {
  const [m, k, n] = gemmShape("dot", a, b);
  const accDtype = accumulatorDtype(a.dtype);
  const acc = options.acc;
  const outDtype = options.outDtype ?? acc?.dtype ?? accDtype;
  checkDtype("dot", outDtype);
  if (acc !== undefined) {
    if (acc.shape.length !== 2 || acc.shape[0] !== m || acc.shape[1] !== n) {
      throw invalid("dot", `accumulator ${formatShape(acc.shape)} does not match the result [${m}, ${n}].`);
    }
    if (acc.dtype !== outDtype) {
      throw invalid("dot", `accumulator is ${acc.dtype} but the output dtype is ${outDtype}.`);
    }
  }
  const float = isFloat(a.dtype);
  const out = new Float64Array(m * n);
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < n; j++) {
      const s = partialSum(a, b, i, j, 0, k);
      let t = s;
      if (acc !== undefined) {
        const previous = roundTo(accDtype, acc.data[i * n + j] as number);
        t = float ? Math.fround(previous + s) : wrap32(previous + s);
      }
      out[i * n + j] = roundTo(outDtype, t);
    }
  }
  return fromRounded(out, [m, n], outDtype);
}

/** One epilogue step of a composite GEMM. */
export interface EpilogueStep {
  /** A unary op, `cast` (the identity), or a binary op with `scalar` (`acc op scalar`). */
  readonly op: string;
  /** `k_tile`: after every K tile; `output_tile` (default): once, after the last. */
  readonly scope?: "k_tile" | "output_tile";
  readonly scalar?: number;
}

/** Options of {@link compositeGemm}. */
export interface CompositeGemmOptions {
  /** The accumulator dtype (default f32 for float inputs, i32 for integer ones). */
  readonly accDtype?: Dtype;
  /** The output dtype (default: the inputs'). */
  readonly outDtype?: Dtype;
  /** `[tm, tn, tk]`, positive integers, clipped to `[M, N, K]`; only `tk` changes values. */
  readonly tile: readonly [number, number, number];
  readonly epilogue?: readonly EpilogueStep[];
}

/** The f64 value of one epilogue step on `x`, before rounding to the accumulator dtype. */
function applyStep(step: EpilogueStep, x: number): number {
  if (step.op === "cast") return x;
  if (isUnaryOp(step.op)) return applyUnary(step.op, x);
  if (isBinaryOp(step.op)) return applyBinary(step.op, x, step.scalar as number);
  throw invalid("compositeGemm", `epilogue op ${JSON.stringify(step.op)} is not elementwise.`);
}

function checkEpilogue(steps: readonly EpilogueStep[]): void {
  steps.forEach((step, i) => {
    const op = step.op;
    if (!(op === "cast" || isUnaryOp(op) || isBinaryOp(op))) {
      throw invalid("compositeGemm", `epilogue[${i}]: ${JSON.stringify(op)} is not an epilogue op.`);
    }
    if (isBinaryOp(op) && typeof step.scalar !== "number") {
      throw invalid("compositeGemm", `epilogue[${i}] (${op}): a binary op needs "scalar".`);
    }
    if (step.scope !== undefined && step.scope !== "k_tile" && step.scope !== "output_tile") {
      throw invalid("compositeGemm", `epilogue[${i}]: scope must be "k_tile" or "output_tile".`);
    }
  });
}

/**
 * `tl.composite("gemm", a, b, ...)`: `C = a @ b` per element as the README's four steps say: the
 * running sum over K tiles of `tk` held in `accDtype` (rounded after every K tile), `k_tile`
 * steps after every K tile, `output_tile` steps once after the last, then rounded to `outDtype`.
 * `b = W^T` for a weight stored `[N, K]` is `transpose(W)`.
 */
export function compositeGemm(a: RefTensor, b: RefTensor, options: CompositeGemmOptions): RefTensor {
  const [m, k, n] = gemmShape("compositeGemm", a, b);
  const accDtype = options.accDtype ?? accumulatorDtype(a.dtype);
  const outDtype = options.outDtype ?? a.dtype;
  checkDtype("compositeGemm", accDtype);
  checkDtype("compositeGemm", outDtype);
  const tile = options.tile;
  if (!Array.isArray(tile) || tile.length !== 3 || tile.some((t) => !Number.isInteger(t) || t < 1)) {
    throw invalid("compositeGemm", `tile must be three positive integers, got ${JSON.stringify(tile)}.`);
  }
  const epilogue = options.epilogue ?? [];
  checkEpilogue(epilogue);
  const kTileSteps = epilogue.filter((step) => step.scope === "k_tile");
  const outputSteps = epilogue.filter((step) => step.scope !== "k_tile");
  const tk = Math.min(tile[2], k);
  const float = isFloat(a.dtype);
  const out = new Float64Array(m * n);
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < n; j++) {
      let acc = 0;
      for (let k0 = 0; k0 < k; k0 += tk) {
        const p = partialSum(a, b, i, j, k0, Math.min(k, k0 + tk));
        if (k0 === 0) acc = roundTo(accDtype, p);
        else if (float) acc = roundTo(accDtype, Math.fround(acc + p));
        else acc = roundTo(accDtype, wrap32(roundTo("i32", acc) + p));
        for (const step of kTileSteps) acc = roundTo(accDtype, applyStep(step, acc));
      }
      for (const step of outputSteps) acc = roundTo(accDtype, applyStep(step, acc));
      out[i * n + j] = roundTo(outDtype, acc);
    }
  }
  return fromRounded(out, [m, n], outDtype);
}
