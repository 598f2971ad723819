import type { Dtype } from "@kb/spec";
import { INTEGER_RANGE, type IntegerDtype, roundToInteger, toBool, toInt64 } from "./convert.js";

// The typed arrays a tensor reads and writes its elements through, one per dtype: f32 as
// Float32Array, f16 and bf16 as their 16-bit patterns, fp8 and fp4 as their byte patterns, the integers as two's complement (the
// 64-bit ones as BigInt64Array / BigUint64Array, exact), i1 as bytes.

/** The typed-array view a tensor reads and writes its elements through. */
export type Elements =
  | Float32Array
  | Uint16Array
  | Int8Array
  | Int16Array
  | Int32Array
  | Uint8Array
  | Uint32Array
  | BigInt64Array
  | BigUint64Array;

/** Element storage indexed by number, whatever the view (a write of the right kind per dtype). */
export type RawElements = { [index: number]: number | bigint; fill(value: number | bigint): unknown };

/** The typed-array view of `bytes` (aligned, `size` elements of `dtype`). */
export function elementsOf(dtype: Dtype, bytes: Uint8Array, size: number): Elements {
  const { buffer, byteOffset } = bytes;
  switch (dtype) {
    case "f32":
      return new Float32Array(buffer, byteOffset, size);
    case "f16":
    case "bf16":
    case "u16":
      return new Uint16Array(buffer, byteOffset, size);
    case "i8":
      return new Int8Array(buffer, byteOffset, size);
    case "i16":
      return new Int16Array(buffer, byteOffset, size);
    case "i32":
      return new Int32Array(buffer, byteOffset, size);
    case "i1":
    case "u8":
    case "f8e4m3":
    case "f8e5m2":
    case "f4e2m1":
      return new Uint8Array(buffer, byteOffset, size);
    case "u32":
      return new Uint32Array(buffer, byteOffset, size);
    case "i64":
      return new BigInt64Array(buffer, byteOffset, size);
    case "u64":
      return new BigUint64Array(buffer, byteOffset, size);
  }
}

/**
 * The stored form of `value` in an element of the integer or boolean `dtype`: rounded half to
 * even and saturated (NaN: 0), a BigInt for the 64-bit dtypes; `i1`: 0 or 1 (`value != 0`).
 */
export function encodeInteger(value: number, dtype: IntegerDtype): number | bigint {
  if (dtype === "i1") return toBool(value);
  if (dtype === "i64" || dtype === "u64") return toInt64(value, dtype);
  const [min, max] = INTEGER_RANGE[dtype];
  return roundToInteger(value, min, max);
}

/** True for the dtypes stored as BigInts (`i64`, `u64`). */
export function isWideDtype(dtype: Dtype): dtype is "i64" | "u64" {
  return dtype === "i64" || dtype === "u64";
}

/**
 * The elements of a tensor of `dtype` over `bytes` as stored, without decoding: binary32
 * values, 16-bit float patterns, integers (BigInts for `i64` / `u64`), booleans as bytes.
 * The view shares the bytes (they must be aligned for the dtype, as a tensor's are).
 */
export function elementView(tensor: {
  readonly dtype: Dtype;
  readonly bytes: Uint8Array;
  readonly size: number;
}): Elements {
  return elementsOf(tensor.dtype, tensor.bytes, tensor.size);
}

/**
 * The stored form of the exact integer `value` in an element of the integer `dtype` (a BigInt for
 * the 64-bit dtypes, a number otherwise), or undefined when the dtype cannot hold it.
 */
export function encodeBigInt(value: bigint, dtype: IntegerDtype): number | bigint | undefined {
  const [min, max] = INTEGER_RANGE[dtype];
  const wide = dtype === "i64" || dtype === "u64";
  const high = dtype === "i64" ? 2n ** 63n - 1n : dtype === "u64" ? 2n ** 64n - 1n : BigInt(max);
  if (value < BigInt(min) || value > high) return undefined;
  return wide ? value : Number(value);
}
