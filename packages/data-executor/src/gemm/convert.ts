// Bulk dtype conversions for GEMM operands: bytes of any dtype to f32 and back.
import { KbError } from "@kb/errors";
import {
  DTYPE_BYTES,
  DTYPES,
  type Dtype,
  decodeNarrowFloat,
  encodeNarrowFloat,
  f16BitsToF32,
  roundToDtype,
} from "@kb/tensor";

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

let f16Values: Float32Array | undefined;

/** Every binary16 value by bit pattern (256 KiB), from @kb/tensor's exact decoding, built once. */
function f16ValueTable(): Float32Array {
  if (f16Values === undefined) {
    f16Values = new Float32Array(65536);
    for (let bits = 0; bits < 65536; bits++) f16Values[bits] = f16BitsToF32(bits);
  }
  return f16Values;
}

function elementBytes(operation: string, dtype: Dtype): number {
  const size = DTYPE_BYTES[dtype];
  if (size === undefined) {
    throw new KbError(
      "TENSOR_INVALID",
      `${operation}: expected a dtype (${DTYPES.join(", ")}), got ${typeof dtype === "string" ? `"${dtype}"` : String(dtype)}.`,
    );
  }
  return size;
}

/** `bytes` as an ArrayBuffer slice starting at a multiple of `size` (copied only when misaligned). */
function alignedBuffer(bytes: Uint8Array, size: number): [ArrayBufferLike, number] {
  if (bytes.byteOffset % size === 0) return [bytes.buffer, bytes.byteOffset];
  return [bytes.slice().buffer, 0];
}

function checkOutput<T extends { readonly length: number }>(
  operation: string,
  out: T | undefined,
  count: number,
  what: string,
): void {
  if (out !== undefined && out.length < count) {
    throw new KbError(
      "TENSOR_INVALID",
      `${operation}: the output has room for ${out.length} ${what}, expected at least ${count}.`,
    );
  }
}

/**
 * Decodes the little-endian elements of `dtype` in `bytes` (`bytes.length / size` of them) to
 * f32, into `out` (its first elements; the result is `out`, or a view of its start when it is
 * longer) or a new array.
 *
 * Exact for f32, f16, bf16 and i8 (every value is an f32); i32 rounds to the nearest f32 (ties to
 * even) from 2^24 up. f16 goes through a 65536-entry table, bf16 is the bits shifted left by 16, so
 * NaN payloads are kept. Throws `TENSOR_INVALID` for an unknown dtype, a byte count that is not a
 * whole number of elements, or an `out` that is too short.
 */
export function toFloat32(bytes: Uint8Array, dtype: Dtype, out?: Float32Array): Float32Array {
  const size = elementBytes("toFloat32", dtype);
  if (bytes.length % size !== 0) {
    throw new KbError(
      "TENSOR_INVALID",
      `toFloat32: ${bytes.length} bytes are not a whole number of ${dtype} elements (${size} bytes each).`,
    );
  }
  const count = bytes.length / size;
  checkOutput("toFloat32", out, count, "values");
  const values =
    out === undefined ? new Float32Array(count) : out.length === count ? out : out.subarray(0, count);
  if (!LITTLE_ENDIAN && size > 1) {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
    for (let i = 0; i < count; i++) values[i] = readBigEndianHost(view, i, dtype);
    return values;
  }
  const [buffer, offset] = alignedBuffer(bytes, size);
  switch (dtype) {
    case "f32":
      values.set(new Float32Array(buffer, offset, count));
      break;
    case "f16": {
      const table = f16ValueTable();
      const source = new Uint16Array(buffer, offset, count);
      for (let i = 0; i < count; i++) values[i] = table[source[i]!]!;
      break;
    }
    case "bf16": {
      const source = new Uint16Array(buffer, offset, count);
      const target = new Uint32Array(values.buffer, values.byteOffset, count);
      for (let i = 0; i < count; i++) target[i] = source[i]! << 16;
      break;
    }
    case "i8":
      values.set(new Int8Array(buffer, offset, count));
      break;
    case "i32":
      values.set(new Int32Array(buffer, offset, count));
      break;
    case "f8e4m3":
    case "f8e5m2":
    case "f4e2m1":
      for (let i = 0; i < count; i++) values[i] = decodeNarrowFloat(bytes[i]!, dtype);
      break;
  }
  return values;
}

function readBigEndianHost(view: DataView, index: number, dtype: Dtype): number {
  switch (dtype) {
    case "f32":
      return view.getFloat32(index * 4, true);
    case "f16":
      return f16ValueTable()[view.getUint16(index * 2, true)]!;
    case "bf16":
      return new Float32Array(new Uint32Array([view.getUint16(index * 2, true) << 16]).buffer)[0]!;
    case "i32":
      return view.getInt32(index * 4, true);
    default:
      return view.getInt8(index);
  }
}

/**
 * The binary16 bits nearest to the binary32 with bits `bits`, ties to even: equal to @kb/tensor's
 * `f32ToF16Bits` of that value (±Inf from 65520 up, subnormals rounded at their own precision,
 * every NaN to 0x7e00), from the f32 bits alone.
 */
function f32BitsToF16Bits(bits: number): number {
  const sign = (bits >>> 16) & 0x8000;
  const magnitude = bits & 0x7fffffff;
  if (magnitude >= 0x477ff000) return magnitude > 0x7f800000 ? 0x7e00 : sign | 0x7c00; // >= 65520, Inf, NaN
  if (magnitude >= 0x38800000) {
    // Normal in binary16: drop 13 fraction bits and rebias the exponent (127 - 15 = 112); a carry
    // out of the fraction moves into the exponent, as the encodings are ordered.
    const kept = (magnitude >>> 13) - (112 << 10);
    const rest = magnitude & 0x1fff;
    return sign | (rest > 0x1000 || (rest === 0x1000 && (kept & 1) === 1) ? kept + 1 : kept);
  }
  if (magnitude <= 0x33000000) return sign; // at most half the smallest subnormal (2^-25): zero
  // Subnormal in binary16: the 24-bit significand in units of 2^-24.
  const shift = 126 - (magnitude >>> 23); // 14..24
  const significand = (magnitude & 0x7fffff) | 0x800000;
  const kept = significand >>> shift;
  const rest = significand & ((1 << shift) - 1);
  const half = 1 << (shift - 1);
  return sign | (rest > half || (rest === half && (kept & 1) === 1) ? kept + 1 : kept);
}

/**
 * Encodes `values` as little-endian elements of `dtype`, into `out` (its first bytes; the result
 * is `out`, or a view of its start when it is longer) or a new array.
 *
 * Rounding is @kb/tensor's `roundToDtype` exactly: f16 and bf16 to nearest, ties to even (f16 and
 * bf16 bit by bit from the f32 bits, with the same infinities, subnormals and NaN encodings as
 * `f32ToF16Bits` / `f32ToBf16Bits`); i8 and i32 rounded half to even and saturated, NaN to 0.
 * Throws `TENSOR_INVALID` for an unknown dtype or an `out` that is too short.
 */
export function fromFloat32(values: Float32Array, dtype: Dtype, out?: Uint8Array): Uint8Array {
  const size = elementBytes("fromFloat32", dtype);
  const count = values.length;
  checkOutput("fromFloat32", out, count * size, "bytes");
  const bytes =
    out === undefined
      ? new Uint8Array(count * size)
      : out.length === count * size
        ? out
        : out.subarray(0, count * size);
  // Encode into an aligned scratch array when `bytes` is misaligned or the host is big-endian.
  const direct = LITTLE_ENDIAN && bytes.byteOffset % size === 0;
  const target = direct ? bytes : new Uint8Array(count * size);
  const source = new Uint32Array(values.buffer, values.byteOffset, count);
  switch (dtype) {
    case "f32":
      target.set(new Uint8Array(values.buffer, values.byteOffset, count * 4));
      break;
    case "f16": {
      const encoded = new Uint16Array(target.buffer, target.byteOffset, count);
      for (let i = 0; i < count; i++) encoded[i] = f32BitsToF16Bits(source[i]!);
      break;
    }
    case "bf16": {
      const encoded = new Uint16Array(target.buffer, target.byteOffset, count);
      for (let i = 0; i < count; i++) {
        const bits = source[i]!;
        // NaN: the quiet NaN 0x7fc0; otherwise add just under half an ulp, plus the kept lowest
        // bit (ties to even), and truncate; overflow rounds into the Inf encoding.
        encoded[i] = (bits & 0x7fffffff) > 0x7f800000 ? 0x7fc0 : (bits + 0x7fff + ((bits >>> 16) & 1)) >>> 16;
      }
      break;
    }
    case "i8": {
      const encoded = new Int8Array(target.buffer, target.byteOffset, count);
      for (let i = 0; i < count; i++) encoded[i] = roundToDtype(values[i]!, "i8");
      break;
    }
    case "i32": {
      const encoded = new Int32Array(target.buffer, target.byteOffset, count);
      for (let i = 0; i < count; i++) encoded[i] = roundToDtype(values[i]!, "i32");
      break;
    }
    case "f8e4m3":
    case "f8e5m2":
    case "f4e2m1":
      for (let i = 0; i < count; i++) target[i] = encodeNarrowFloat(values[i]!, dtype);
      break;
  }
  if (!direct) {
    if (!LITTLE_ENDIAN && size > 1)
      for (let i = 0; i < count; i++) target.subarray(i * size, (i + 1) * size).reverse();
    bytes.set(target);
  }
  return bytes;
}
