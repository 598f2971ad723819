// Integer arithmetic of packages/tl/README.md ("Integer arithmetic wraps"): on the integers the
// exact integer result is taken modulo 2^bits into the dtype's range (two's complement); `div`
// truncates toward zero, `mod` has the dividend's sign, division by zero gives -1 and `a % 0` is
// `a`. Computed with BigInt (exact at any size), independently of the implementation's f64 and
// Math.imul arithmetic.

import { type Dtype, INTEGER_RANGES, type IntegerDtype } from "./dtype.js";

/** The integer dtypes whose arithmetic wraps, with their widths. */
const BITS: Readonly<Partial<Record<Dtype, number>>> = Object.freeze({
  i8: 8,
  i32: 32,
  u32: 32,
  u8: 8,
  u16: 16,
  i16: 16,
  i64: 64,
  u64: 64,
});

/** The unsigned integer dtypes. */
const UNSIGNED: ReadonlySet<Dtype> = new Set(["u8", "u16", "u32", "u64"]);

/**
 * The integer value of an element or number operand of `dtype` as a BigInt: on i64 / u64 a value
 * at the type's end (2^63, 2^64: the double the largest value reads as) counts as that largest
 * value; a negative number operand of an unsigned dtype is its two's complement (the README: `-3`
 * on u32 is 2^32 - 3).
 */
export function exact(dtype: Dtype, a: number): bigint {
  const [, end] = INTEGER_RANGES[dtype as IntegerDtype];
  const bits = BITS[dtype] as number;
  if (a < 0 && UNSIGNED.has(dtype)) return BigInt.asUintN(bits, BigInt(a));
  return bits === 64 && a >= end ? BigInt(end) - 1n : BigInt(a);
}

/** True when `dtype` is an integer dtype whose arithmetic wraps. */
export function wraps(dtype: Dtype): boolean {
  return BITS[dtype] !== undefined;
}

/** `n` modulo 2^bits of `dtype`, in its range (signed, or [0, 2^bits) unsigned), as a number. */
export function wrapTo(dtype: Dtype, n: bigint): number {
  const bits = BITS[dtype] as number;
  return Number(UNSIGNED.has(dtype) ? BigInt.asUintN(bits, n) : BigInt.asIntN(bits, n));
}

/** The wrapped result of a binary op on two integers of `dtype` (the README's formulas). */
export function integerBinary(
  op: "add" | "sub" | "mul" | "div" | "mod",
  dtype: Dtype,
  a: number,
  b: number,
): number {
  const x = exact(dtype, a);
  const y = exact(dtype, b);
  switch (op) {
    case "add":
      return wrapTo(dtype, x + y);
    case "sub":
      return wrapTo(dtype, x - y);
    case "mul":
      return wrapTo(dtype, x * y);
    case "div":
      // BigInt division truncates toward zero.
      // All bits set by zero: -1, or 2^32 - 1 in u32.
      return y === 0n ? wrapTo(dtype, -1n) : wrapTo(dtype, x / y);
    case "mod":
      // BigInt's remainder has the dividend's sign; a % 0 is a.
      return y === 0n ? a : wrapTo(dtype, x % y);
  }
}

/** `abs(a)` wrapped: the most negative value stays itself. */
export function integerAbs(dtype: Dtype, a: number): number {
  const x = exact(dtype, a);
  return wrapTo(dtype, x < 0n ? -x : x);
}

/** The exact sum of integers, wrapped (64-bit dtypes too: the README's "64-bit integers are exact"). */
export function integerSum(dtype: Dtype, values: readonly number[]): number {
  let total = 0n;
  for (const v of values) total += exact(dtype, v);
  return wrapTo(dtype, total);
}
