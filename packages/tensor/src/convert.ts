import { KbError } from "@kb/errors";
import { DTYPES, type Dtype, type NarrowFloatDtype } from "@kb/spec";
import { decodeNarrowFloat, encodeNarrowFloat } from "./narrow-float.js";

/** True on a little-endian platform: typed arrays then read the tensor byte layout directly. */
export const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

// Scratch views for reading the bits of a double and building a binary32 from bits. Shared and
// reused: the conversions are called once per element of large tensors and must not allocate.
const scratchF64 = new Float64Array(1);
const scratchF64Words = new Uint32Array(scratchF64.buffer);
const HIGH_WORD = LITTLE_ENDIAN ? 1 : 0;
const LOW_WORD = 1 - HIGH_WORD;
const scratchF32 = new Float32Array(1);
const scratchF32Bits = new Uint32Array(scratchF32.buffer);

/**
 * Rounds the double `x` to a 16-bit binary float with `mantissaBits` fraction bits and exponent
 * bias `bias` (a sign bit, then the exponent, then the fraction), round to nearest, ties to even,
 * in one step from the double's own bits (no intermediate binary32, so no double rounding).
 * Subnormal results are rounded at their own (fixed) precision; results past the largest finite
 * value become infinities; any NaN becomes the positive quiet NaN with only the top fraction bit
 * set, since the sign and payload of a JS NaN are not reliable.
 */
function roundDoubleToHalfBits(x: number, mantissaBits: number, bias: number): number {
  scratchF64[0] = x;
  const high = scratchF64Words[HIGH_WORD]!;
  const low = scratchF64Words[LOW_WORD]!;
  const sign = (high >>> 16) & 0x8000;
  const biasedExponent = (high >>> 20) & 0x7ff;
  const infinityBits = ((2 * bias + 1) << mantissaBits) >>> 0;
  if (biasedExponent === 0x7ff) {
    const fractionIsZero = (high & 0xfffff) === 0 && low === 0;
    return fractionIsZero ? sign | infinityBits : infinityBits | (1 << (mantissaBits - 1));
  }
  const exponent = biasedExponent - 1023;
  if (exponent > bias) return sign | infinityBits;
  const minExponent = 1 - bias;
  // How far the 53-bit significand (binary point after its top bit) is shifted right to leave the
  // target's fraction bits; below the normal range the target precision shrinks one bit per binade.
  const shift = 52 - mantissaBits + (exponent < minExponent ? minExponent - exponent : 0);
  // Past 53 even the rounding bit is gone: less than half the smallest subnormal (and every
  // double subnormal, whose exponent reads -1023 here) rounds to a signed zero.
  if (shift > 53) return sign;
  const significandHigh = (high & 0xfffff) | 0x100000; // bits 52..32 of the significand
  const highShift = shift - 32; // >= 10: the kept bits all come from the high word
  const kept = significandHigh >>> highShift;
  const rest = significandHigh & ((1 << highShift) - 1);
  const half = 1 << (highShift - 1);
  // For a normal result the significand's leading 1 lands on the lowest exponent bit, so adding
  // it to (biased exponent - 1) gives the encoding; a carry out of the fraction by rounding then
  // moves into the exponent (up to the infinity encoding), as IEEE encodings are ordered.
  let bits = (exponent >= minExponent ? (exponent + bias - 1) << mantissaBits : 0) + kept;
  if (rest > half || (rest === half && (low !== 0 || (bits & 1) === 1))) bits += 1;
  return sign | bits;
}

/**
 * The IEEE binary16 bits (0..0xffff) nearest to `x`.
 *
 * The input is a JS number (a double) and is rounded *directly* to the nearest binary16, ties to
 * even, subnormals included: it is not first rounded to binary32, which could round twice (a
 * double just above a binary16 tie becomes the tie in binary32, then rounds to even the wrong
 * way). Magnitudes from 65520 up (and infinities) give ±Inf (0x7c00, 0xfc00); the sign of zero
 * is kept; every NaN gives the quiet NaN 0x7e00 (JS does not reliably keep NaN signs or payloads).
 */
export function f32ToF16Bits(x: number): number {
  return roundDoubleToHalfBits(x, 10, 15);
}

/**
 * The bfloat16 bits (0..0xffff) nearest to `x`: the top 16 bits of a binary32 with the same
 * exponent range, 7 fraction bits.
 *
 * Like {@link f32ToF16Bits}, the double is rounded directly to the nearest bfloat16, ties to
 * even, subnormals included (no double rounding through binary32). Magnitudes from
 * (2 - 2^-8)·2^127 up give ±Inf (0x7f80, 0xff80), so the largest binary32 (3.4028234663852886e38)
 * rounds to Inf; every NaN gives the quiet NaN 0x7fc0.
 */
export function f32ToBf16Bits(x: number): number {
  return roundDoubleToHalfBits(x, 7, 127);
}

let f16Table: Float32Array | undefined;

/** Every binary16 value by bit pattern, built on first use (256 KiB). */
function buildF16Table(): Float32Array {
  const table = new Float32Array(65536);
  const tableBits = new Uint32Array(table.buffer);
  for (let bits = 0; bits < 65536; bits++) {
    const sign = (bits & 0x8000) << 16;
    const exponent = (bits >>> 10) & 0x1f;
    const fraction = bits & 0x3ff;
    if (exponent === 0x1f) {
      // Inf, or a NaN with its payload kept and made quiet.
      tableBits[bits] = (sign | 0x7f800000 | (fraction << 13) | (fraction === 0 ? 0 : 0x400000)) >>> 0;
    } else if (exponent === 0) {
      table[bits] = (sign === 0 ? 1 : -1) * fraction * 2 ** -24; // subnormal or zero, exact
    } else {
      tableBits[bits] = (sign | ((exponent + 112) << 23) | (fraction << 13)) >>> 0;
    }
  }
  f16Table = table;
  return table;
}

/** The table of {@link f16BitsToF32}: entry `bits` is the value of that binary16 pattern. */
export function f16ValueTable(): Float32Array {
  return f16Table ?? buildF16Table();
}

/**
 * The value of the IEEE binary16 with bits `bits` (only the low 16 bits are used), exact: every
 * binary16 is a binary32. Looks the value up in a 65536-entry table built on the first call.
 */
export function f16BitsToF32(bits: number): number {
  return (f16Table ?? buildF16Table())[bits & 0xffff]!;
}

/** The value of the bfloat16 with bits `bits` (only the low 16 bits are used), exact. */
export function bf16BitsToF32(bits: number): number {
  scratchF32Bits[0] = (bits & 0xffff) << 16;
  return scratchF32[0]!;
}

/**
 * `x` rounded half to even to an integer and saturated to [`min`, `max`]; NaN gives 0 (never -0).
 */
export function roundToInteger(x: number, min: number, max: number): number {
  if (Number.isNaN(x)) return 0;
  if (x <= min) return min;
  if (x >= max) return max;
  const rounded = Math.round(x); // halves go up; exact ties (rounded - x === 0.5) go back down to even
  return (rounded - x === 0.5 && (rounded & 1) !== 0 ? rounded - 1 : rounded) + 0; // + 0 turns -0 into 0
}

/** `x` as an `i1` element: 0 for ±0, 1 otherwise (NaN included: NaN != 0). */
export function toBool(x: number): number {
  return x === 0 ? 0 : 1;
}

/** The integer and boolean dtypes (every dtype but the floats). */
export type IntegerDtype = Exclude<Dtype, "f32" | "f16" | "bf16" | NarrowFloatDtype>;

/**
 * The smallest and largest value of each integer dtype, as doubles: the 64-bit types' largest
 * values (2^63 - 1, 2^64 - 1) read as their nearest doubles, 2^63 and 2^64.
 */
export const INTEGER_RANGE: Readonly<Record<IntegerDtype, readonly [number, number]>> = Object.freeze({
  i8: Object.freeze([-128, 127] as const),
  i32: Object.freeze([-2147483648, 2147483647] as const),
  i1: Object.freeze([0, 1] as const),
  u32: Object.freeze([0, 4294967295] as const),
  u8: Object.freeze([0, 255] as const),
  u16: Object.freeze([0, 65535] as const),
  i16: Object.freeze([-32768, 32767] as const),
  i64: Object.freeze([-(2 ** 63), 2 ** 63] as const),
  u64: Object.freeze([0, 2 ** 64] as const),
});

/**
 * The 64-bit element `x` is stored as: rounded half to even and saturated as the other integer
 * dtypes (NaN: 0), as a BigInt in [-2^63, 2^63) (`i64`) or [0, 2^64) (`u64`), exactly.
 */
export function toInt64(x: number, dtype: "i64" | "u64"): bigint {
  const [min, max] = INTEGER_RANGE[dtype];
  const rounded = BigInt(roundToInteger(x, min, max));
  const last = dtype === "i64" ? 2n ** 63n - 1n : 2n ** 64n - 1n;
  return rounded > last ? last : rounded;
}

/**
 * The number `x` reads back as after being stored into an element of `dtype`.
 *
 * - `f32`: `Math.fround(x)` (nearest binary32, ties to even, overflow to ±Inf).
 * - `f16`, `bf16`: the nearest value, rounded directly from the double (see {@link f32ToF16Bits}),
 *   as a number; NaN stays NaN.
 * - `i8`, `i32`, `u32`, `u8`, `u16`, `i16`, `i64`, `u64`: rounded half to even (2.5 → 2, 3.5 → 4,
 *   -2.5 → -2), then saturated to the type's range (300 → 127 in i8, -Inf → -2147483648 in i32);
 *   NaN stores 0. This is not what a JS `Int8Array` does (truncation modulo 2^8). A 64-bit
 *   element is stored exactly but reads back as the nearest double (exact while |x| <= 2^53).
 * - `i1`: 0 for ±0, 1 for anything else (NaN included): `x != 0`, Triton's and PyTorch's
 *   conversion to bool.
 * - `f8e4m3`, `f8e5m2`, `f4e2m1`: the nearest value, ties to even, saturating at the largest
 *   finite value (see `encodeNarrowFloat`).
 *
 * Throws `TENSOR_INVALID` for an unknown dtype.
 */
export function roundToDtype(x: number, dtype: Dtype): number {
  switch (dtype) {
    case "f32":
      return Math.fround(x);
    case "f16":
      return f16BitsToF32(f32ToF16Bits(x));
    case "bf16":
      return bf16BitsToF32(f32ToBf16Bits(x));
    case "i8":
      return roundToInteger(x, -128, 127);
    case "i32":
      return roundToInteger(x, -2147483648, 2147483647);
    case "i1":
      return toBool(x);
    case "u32":
      return roundToInteger(x, 0, 4294967295);
    case "u8":
    case "u16":
    case "i16":
    case "i64":
    case "u64":
      return roundToInteger(x, ...INTEGER_RANGE[dtype]);
    case "f8e4m3":
    case "f8e5m2":
    case "f4e2m1":
      return decodeNarrowFloat(encodeNarrowFloat(x, dtype), dtype);
    default:
      throw unknownDtype(dtype);
  }
}

/** The `TENSOR_INVALID` error for a value that is not a dtype. */
export function unknownDtype(value: unknown): KbError {
  return new KbError(
    "TENSOR_INVALID",
    `expected a dtype (${DTYPES.join(", ")}), got ${typeof value === "string" ? `"${value}"` : String(value)}.`,
  );
}
