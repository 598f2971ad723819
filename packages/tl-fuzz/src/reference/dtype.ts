// Element types and the rounding of a real (f64) value to each, as packages/tl/README.md
// ("Semantics", "Dtypes and rounding") states them. Written from that text alone: no code is
// shared with @kb/tensor or @kb/data-executor, so the two implementations check each other (only
// the dtype names, a type, come from @kb/spec, where the kernels' are defined).

import { KbError } from "@kb/errors";
import type { Dtype as KernelDtype } from "@kb/spec";
import { isNarrow, roundToNarrow } from "./narrow-float.js";

/** The element types of the kernel language the reference computes in (booleans are masks). */
export type Dtype = Exclude<KernelDtype, "i1">;

/** Every dtype, floats first (fp8 and fp4 appended). */
export const DTYPES: readonly Dtype[] = Object.freeze([
  "f32",
  "f16",
  "bf16",
  "i8",
  "i32",
  "u32",
  "u8",
  "u16",
  "i16",
  "i64",
  "u64",
  "f8e4m3",
  "f8e5m2",
  "f4e2m1",
]);

/** True for f32, f16, bf16 and the fp8 and fp4 dtypes. */
export function isFloat(dtype: Dtype): boolean {
  return dtype === "f32" || dtype === "f16" || dtype === "bf16" || isNarrow(dtype);
}

/** A binary float format narrower than f64: fraction bits and exponent bits. */
interface SmallFloat {
  readonly fractionBits: number;
  readonly exponentBits: number;
}

const F16: SmallFloat = { fractionBits: 10, exponentBits: 5 };
const BF16: SmallFloat = { fractionBits: 7, exponentBits: 8 };

const bitsView = new DataView(new ArrayBuffer(8));

/**
 * The bits of the value of `format` nearest to `x`, ties to even, rounded in one step from the
 * double's exact significand (no intermediate binary32); subnormals at their fixed precision,
 * overflow to ±Inf, the sign of zero kept, any NaN to the quiet NaN with only the top fraction
 * bit set.
 */
function encodeSmallFloat(x: number, format: SmallFloat): number {
  const p = format.fractionBits;
  const bias = 2 ** (format.exponentBits - 1) - 1;
  const maxField = 2 ** format.exponentBits - 1;
  const infinity = maxField * 2 ** p;
  if (Number.isNaN(x)) return infinity + 2 ** (p - 1);
  bitsView.setFloat64(0, x);
  const bits = bitsView.getBigUint64(0);
  const sign = bits >> 63n === 1n ? 2 ** (format.exponentBits + p) : 0;
  const field64 = Number((bits >> 52n) & 0x7ffn);
  const fraction64 = bits & ((1n << 52n) - 1n);
  if (field64 === 0x7ff) return sign + infinity;
  if (field64 === 0 && fraction64 === 0n) return sign;
  // |x| = significand · 2^(exponent - 52).
  const exponent = field64 === 0 ? -1022 : field64 - 1023;
  const significand = field64 === 0 ? fraction64 : fraction64 | (1n << 52n);
  // The result's exponent: x's own, or the smallest normal one (the subnormal range has fixed
  // precision). Count |x| in quanta of 2^(t - p), rounding the remainder half to even.
  const emin = 1 - bias;
  const t = Math.max(exponent, emin);
  const shift = BigInt(t - p - (exponent - 52)); // > 0: p < 52 and exponent <= t
  let kept = significand >> shift;
  const rest = significand - (kept << shift);
  const half = 1n << (shift - 1n);
  if (rest > half || (rest === half && (kept & 1n) === 1n)) kept += 1n;
  let quanta = Number(kept);
  let e = t;
  if (quanta === 2 ** (p + 1)) {
    // Rounding carried into the next binade.
    quanta /= 2;
    e += 1;
  }
  if (quanta < 2 ** p) return sign + quanta; // subnormal (or zero): exponent field 0
  const field = e + bias;
  if (field >= maxField) return sign + infinity;
  return sign + field * 2 ** p + (quanta - 2 ** p);
}

/** The exact value of the `format` bits `bits`. */
function decodeSmallFloat(bits: number, format: SmallFloat): number {
  const p = format.fractionBits;
  const bias = 2 ** (format.exponentBits - 1) - 1;
  const maxField = 2 ** format.exponentBits - 1;
  const sign = Math.floor(bits / 2 ** (format.exponentBits + p)) % 2 === 1 ? -1 : 1;
  const field = Math.floor(bits / 2 ** p) % (maxField + 1);
  const fraction = bits % 2 ** p;
  if (field === maxField) return fraction === 0 ? sign * Number.POSITIVE_INFINITY : Number.NaN;
  if (field === 0) return sign * fraction * 2 ** (1 - bias - p);
  return sign * (2 ** p + fraction) * 2 ** (field - bias - p);
}

/** The IEEE binary16 bits (0..0xffff) nearest to `x`: ties to even, ±Inf from 65520, NaN 0x7e00. */
export function encodeF16(x: number): number {
  return encodeSmallFloat(x, F16);
}

/** The value of the binary16 with bits `bits` (0..0xffff), exact. */
export function decodeF16(bits: number): number {
  return decodeSmallFloat(bits & 0xffff, F16);
}

/** The bfloat16 bits (0..0xffff) nearest to `x`: ties to even, ±Inf from (2 - 2^-8)·2^127, NaN 0x7fc0. */
export function encodeBf16(x: number): number {
  return encodeSmallFloat(x, BF16);
}

/** The value of the bfloat16 with bits `bits` (0..0xffff), exact. */
export function decodeBf16(bits: number): number {
  return decodeSmallFloat(bits & 0xffff, BF16);
}

/** The integer dtypes. */
export type IntegerDtype = Exclude<Dtype, "f32" | "f16" | "bf16" | "f8e4m3" | "f8e5m2" | "f4e2m1">;

/**
 * The range of each integer dtype, both ends included; the 64-bit ends as the nearest doubles
 * (2^63 - 1 reads 2^63, 2^64 - 1 reads 2^64: the README's dtype table).
 */
export const INTEGER_RANGES: Readonly<Record<IntegerDtype, readonly [number, number]>> = Object.freeze({
  i8: Object.freeze([-128, 127] as const),
  i32: Object.freeze([-2147483648, 2147483647] as const),
  u32: Object.freeze([0, 4294967295] as const),
  u8: Object.freeze([0, 255] as const),
  u16: Object.freeze([0, 65535] as const),
  i16: Object.freeze([-32768, 32767] as const),
  i64: Object.freeze([-(2 ** 63), 2 ** 63] as const),
  u64: Object.freeze([0, 2 ** 64] as const),
});

/** `x` rounded half to even to an integer, saturated to `[min, max]`; NaN gives 0, never -0. */
function roundToInteger(x: number, min: number, max: number): number {
  if (Number.isNaN(x)) return 0;
  if (x <= min) return min;
  if (x >= max) return max;
  const floor = Math.floor(x);
  const fraction = x - floor; // exact: a double past 2^52 is an integer
  const rounded = fraction > 0.5 ? floor + 1 : fraction < 0.5 ? floor : floor % 2 === 0 ? floor : floor + 1;
  return rounded + 0; // -0 becomes 0
}

/**
 * `x` rounded to `dtype` (the README's `round_d`): f32 by `Math.fround`; f16 and bf16 to nearest,
 * ties to even, directly from the double (subnormals, ±Inf on overflow, NaN stays NaN); the
 * integers half to even, saturated, NaN to 0.
 */
export function roundTo(dtype: Dtype, x: number): number {
  switch (dtype) {
    case "f32":
      return Math.fround(x);
    case "f16":
      return decodeF16(encodeF16(x));
    case "bf16":
      return decodeBf16(encodeBf16(x));
    case "f8e4m3":
    case "f8e5m2":
    case "f4e2m1":
      return roundToNarrow(dtype, x);
    default:
      return roundToInteger(x, ...INTEGER_RANGES[dtype]);
  }
}

/** The integer `n` modulo 2^32 in [-2^31, 2^31) (two's complement), the README's `wrap32`. */
export function wrap32(n: number): number {
  return n | 0;
}

/** Throws unless `value` is a dtype. */
export function checkDtype(call: string, value: unknown): asserts value is Dtype {
  if (!DTYPES.includes(value as Dtype)) {
    throw invalid(call, `unknown dtype ${JSON.stringify(value)}; use ${DTYPES.join(", ")}.`);
  }
}

/** The error of a call the semantics do not allow (the evaluator's `TL_INVALID_CALL`). */
export function invalid(call: string, detail: string): KbError {
  return new KbError("TL_INVALID_CALL", `reference ${call}: ${detail}`);
}
