// Non-finite values in phase 2's outputs (executor.ts): finding the first NaN or infinity an op
// stored, to name the op and PE it came from. @internal to the package.
import {
  DTYPE_BYTES,
  type Dtype,
  decodeNarrowFloat,
  isFloatDtype,
  isNarrowFloatDtype,
  Tensor,
} from "@kb/tensor";

/**
 * The flat index of the first NaN or infinity among the `dtype` elements in `bytes`, or -1.
 * Integer dtypes are always finite. Reads the bit patterns in place (one view, no copy unless
 * `bytes` is misaligned, which the executor's own arrays never are).
 */
export function firstNonFiniteIndex(bytes: Uint8Array, dtype: Dtype): number {
  if (!isFloatDtype(dtype)) return -1;
  const size = DTYPE_BYTES[dtype];
  const aligned = bytes.byteOffset % size === 0 ? bytes : bytes.slice();
  const count = aligned.byteLength / size;
  if (dtype === "f32") {
    const values = new Float32Array(aligned.buffer, aligned.byteOffset, count);
    // x - x is 0 for a finite x, NaN for NaN and the infinities.
    for (let i = 0; i < count; i++) if (values[i]! - values[i]! !== 0) return i;
    return -1;
  }
  if (isNarrowFloatDtype(dtype)) {
    for (let i = 0; i < count; i++) if (!Number.isFinite(decodeNarrowFloat(aligned[i]!, dtype))) return i;
    return -1;
  }
  // f16 and bf16: an all-ones exponent is an infinity (zero mantissa) or a NaN.
  const exponent = dtype === "f16" ? 0x7c00 : 0x7f80;
  const bits = new Uint16Array(aligned.buffer, aligned.byteOffset, count);
  for (let i = 0; i < count; i++) if ((bits[i]! & exponent) === exponent) return i;
  return -1;
}

/** True when `values` hold a NaN or an infinity. */
export function hasNonFinite(values: Float32Array): boolean {
  for (let i = 0; i < values.length; i++) if (values[i]! - values[i]! !== 0) return true;
  return false;
}

/** Element `index` of float `dtype` data in `bytes`, decoded exactly. */
export function storedValue(bytes: Uint8Array, dtype: Dtype, index: number): number {
  const size = DTYPE_BYTES[dtype];
  return new Tensor([1], dtype, bytes.slice(index * size, (index + 1) * size)).getFlat(0);
}
