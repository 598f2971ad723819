// The elementwise ops of packages/tl/README.md ("Elementwise math"): each element computed in f64
// from the exact operand values by the README's formula, then rounded once to the result dtype.

import { checkDtype, type Dtype, invalid, isFloat, roundTo } from "./dtype.js";
import { exact, integerAbs, integerBinary, wraps, wrapTo } from "./integer.js";
import { formatShape, fromRounded, type RefTensor, sameShape } from "./tensor.js";

/** The unary ops (`tl.exp`, ...). */
export const UNARY_OPS = Object.freeze([
  "exp",
  "log",
  "sqrt",
  "abs",
  "sigmoid",
  "cos",
  "sin",
  "relu",
  "floor",
  "ceil",
] as const);
export type UnaryOp = (typeof UNARY_OPS)[number];

/** The binary ops (`tl.add`, ...); each also takes a scalar second operand. */
export const BINARY_OPS = Object.freeze(["add", "sub", "mul", "div", "maximum", "minimum", "mod"] as const);
export type BinaryOp = (typeof BINARY_OPS)[number];

/** A unary op on one f64 value, before rounding. */
export function applyUnary(op: UnaryOp, x: number): number {
  switch (op) {
    case "exp":
      return Math.exp(x);
    case "log":
      return Math.log(x);
    case "sqrt":
      return Math.sqrt(x);
    case "abs":
      return Math.abs(x);
    case "sigmoid":
      return 1 / (1 + Math.exp(-x));
    case "cos":
      return Math.cos(x);
    case "sin":
      return Math.sin(x);
    case "relu":
      return Math.max(x, 0);
    case "floor":
      return Math.floor(x);
    case "ceil":
      return Math.ceil(x);
  }
}

/** A binary op on two f64 values, before rounding. */
export function applyBinary(op: BinaryOp, a: number, b: number): number {
  switch (op) {
    case "add":
      return a + b;
    case "sub":
      return a - b;
    case "mul":
      return a * b;
    case "div":
      return a / b;
    case "maximum":
      // The first operand on a tie (-0, +0); a NaN on either side gives NaN.
      return a >= b || Number.isNaN(a) ? a : b;
    case "minimum":
      return a <= b || Number.isNaN(a) ? a : b;
    case "mod":
      // C's fmod: the dividend's sign; NaN for b = 0 (integers: integer.ts).
      return a % b;
  }
}

/** True when `op` is a unary op. */
export function isUnaryOp(op: string): op is UnaryOp {
  return (UNARY_OPS as readonly string[]).includes(op);
}

/** True when `op` is a binary op. */
export function isBinaryOp(op: string): op is BinaryOp {
  return (BINARY_OPS as readonly string[]).includes(op);
}

/** Options of {@link unary}. */
export interface UnaryOptions {
  /** The dtype to round to (default `x.dtype`, as `tl` does). */
  readonly dtype?: Dtype;
}

/** `tl.exp(x)` etc.: same shape, `x.dtype` (or `options.dtype`). */
export function unary(op: UnaryOp, x: RefTensor, options: UnaryOptions = {}): RefTensor {
  if (!isUnaryOp(op))
    throw invalid("unary", `unknown op ${JSON.stringify(op)}; use ${UNARY_OPS.join(", ")}.`);
  const dtype = options.dtype ?? x.dtype;
  checkDtype(op, dtype);
  const out = new Float64Array(x.data.length);
  // abs of an integer wraps (the README's integer arithmetic): abs(-128) in i8 is -128.
  const integerAbsOf = op === "abs" && dtype === x.dtype && wraps(dtype);
  for (let i = 0; i < out.length; i++) {
    const v = x.data[i] as number;
    out[i] = integerAbsOf ? integerAbs(dtype, v) : roundTo(dtype, applyUnary(op, v));
  }
  return fromRounded(out, x.shape, dtype);
}

/** Throws unless the tensors share one shape and one dtype (no broadcasting, no promotion). */
function checkOperands(call: string, tensors: readonly RefTensor[]): void {
  const first = tensors[0] as RefTensor;
  for (const t of tensors) {
    if (!sameShape(t.shape, first.shape)) {
      throw invalid(call, `operand shapes differ: ${tensors.map((u) => formatShape(u.shape)).join(", ")}.`);
    }
    if (t.dtype !== first.dtype) {
      throw invalid(call, `operand dtypes differ: ${tensors.map((u) => u.dtype).join(", ")}.`);
    }
  }
}

/**
 * `tl.add(a, b)` etc.: `b` a tensor of `a`'s shape and dtype, or a finite number used at f64
 * precision (not rounded to the dtype first). Result: `a`'s shape and dtype.
 */
export function binary(op: BinaryOp, a: RefTensor, b: RefTensor | number): RefTensor {
  if (!isBinaryOp(op))
    throw invalid("binary", `unknown op ${JSON.stringify(op)}; use ${BINARY_OPS.join(", ")}.`);
  const out = new Float64Array(a.data.length);
  // add, sub, mul, div, mod of integers wrap (the README's integer arithmetic), unless the scalar is
  // not an integer: then f64 and round_d.
  const integer =
    wraps(a.dtype) && op !== "maximum" && op !== "minimum" && (typeof b !== "number" || Number.isInteger(b));
  const apply = (x: number, y: number): number =>
    integer
      ? integerBinary(op as "add" | "sub" | "mul" | "div" | "mod", a.dtype, x, y)
      : roundTo(a.dtype, applyBinary(op, x, y));
  if (typeof b === "number") {
    if (!Number.isFinite(b)) throw invalid(op, `scalar must be finite, got ${b}.`);
    for (let i = 0; i < out.length; i++) out[i] = apply(a.data[i] as number, b);
  } else {
    checkOperands(op, [a, b]);
    for (let i = 0; i < out.length; i++) out[i] = apply(a.data[i] as number, b.data[i] as number);
  }
  return fromRounded(out, a.shape, a.dtype);
}

/** `tl.fma(a, b, c)`: `a · b + c` in f64 (two f64 roundings), then once to the dtype. */
export function fma(a: RefTensor, b: RefTensor, c: RefTensor): RefTensor {
  checkOperands("fma", [a, b, c]);
  const out = new Float64Array(a.data.length);
  for (let i = 0; i < out.length; i++) {
    const [x, y, z] = [a.data[i] as number, b.data[i] as number, c.data[i] as number];
    // Integers: the exact a · b + c, wrapped once into the dtype (the README's integer arithmetic).
    out[i] = wraps(a.dtype)
      ? wrapTo(a.dtype, exact(a.dtype, x) * exact(a.dtype, y) + exact(a.dtype, z))
      : roundTo(a.dtype, x * y + z);
  }
  return fromRounded(out, a.shape, a.dtype);
}

/** `tl.where(cond, a, b)`: `cond != 0 ? a : b` (NaN is true, ±0 false); cond has a's dtype. */
export function where(cond: RefTensor, a: RefTensor, b: RefTensor): RefTensor {
  checkOperands("where", [cond, a, b]);
  const out = new Float64Array(a.data.length);
  for (let i = 0; i < out.length; i++)
    out[i] = cond.data[i] !== 0 ? (a.data[i] as number) : (b.data[i] as number);
  return fromRounded(out, a.shape, a.dtype);
}

/** `tl.clamp(x, lo, hi)`: `min(max(x, lo), hi)`; needs `lo <= hi`. */
export function clamp(x: RefTensor, lo: number, hi: number): RefTensor {
  if (!(lo <= hi)) throw invalid("clamp", `needs lo <= hi, got ${lo} and ${hi}.`);
  const out = new Float64Array(x.data.length);
  for (let i = 0; i < out.length; i++)
    out[i] = roundTo(x.dtype, Math.min(Math.max(x.data[i] as number, lo), hi));
  return fromRounded(out, x.shape, x.dtype);
}

/** `tl.cast(x, dtype)`: every element `roundTo(dtype, x)`, truncated toward zero first to an integer dtype. */
export function cast(x: RefTensor, dtype: Dtype): RefTensor {
  checkDtype("cast", dtype);
  const out = new Float64Array(x.data.length);
  const toInteger = !isFloat(dtype);
  for (let i = 0; i < out.length; i++) {
    const value = x.data[i] as number;
    out[i] = roundTo(dtype, toInteger ? Math.trunc(value) : value);
  }
  return fromRounded(out, x.shape, dtype);
}
