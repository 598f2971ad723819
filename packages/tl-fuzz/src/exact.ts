// How exact a value stays through an elementwise op: every element a multiple of 2^grain with
// |x| <= bound (program.ts's Exact), so a GEMM of it sums exactly in f32.

import { type BinaryOp, type Dtype, type Exact, isFloat } from "./program.js";

/** The exactness of a scalar operand `value` of `dtype`. */
export function exactOfScalar(dtype: Dtype, value: number): Exact {
  if (!isFloat(dtype)) return { grain: 0, bound: Math.abs(value) };
  const grain = value === 0 || Number.isInteger(value) ? 0 : Number.isInteger(value * 2) ? -1 : -2;
  return { grain, bound: Math.abs(value) };
}

/** What an elementwise binary op keeps of its operands' exactness (null: not exact). */
export function binaryExact(op: BinaryOp, a: Exact | null, b: Exact | null): Exact | null {
  if (a === null || b === null) return null;
  switch (op) {
    case "add":
    case "sub":
      return { grain: Math.min(a.grain, b.grain), bound: a.bound + b.bound };
    case "mul":
      return { grain: a.grain + b.grain, bound: a.bound * b.bound };
    case "maximum":
    case "minimum":
      return { grain: Math.min(a.grain, b.grain), bound: Math.max(a.bound, b.bound) };
    case "div":
    case "mod":
      return null;
  }
}
