// The e8m0 block scales of a scaled GEMM (tl.dotScaled, microscaling): one byte per
// MX_SCALE_BLOCK elements along k, applied to the decoded operands before the f32 GEMM.
import { MX_SCALE_BLOCK } from "@kb/oplog";

/** The value of the e8m0 byte `byte`: `2^(byte - 127)`, NaN for 255. */
export function e8m0Value(byte: number): number {
  return byte === 255 ? Number.NaN : 2 ** (byte - 127);
}

/**
 * Multiplies each element of an operand by its block's scale, in place. `values` holds the operand
 * as stored: `rows x k` when `kContiguous` (A, or B stored transposed as `[n, k]`), else `k x rows`
 * (B as `[k, n]`, or A stored transposed as `[k, m]`); `scales` holds `rows x ceil(k / 32)` bytes,
 * row-major: the scale of (row, kk) is byte `row * ceil(k / 32) + floor(kk / 32)`. Exact while the
 * product stays in f32's range (an fp8 or fp4 value times a power of two).
 */
export function applyBlockScales(
  values: Float32Array,
  scales: Uint8Array,
  rows: number,
  k: number,
  kContiguous: boolean,
): void {
  const blocks = Math.ceil(k / MX_SCALE_BLOCK);
  for (let row = 0; row < rows; row++) {
    for (let kk = 0; kk < k; kk++) {
      const scale = e8m0Value(scales[row * blocks + Math.floor(kk / MX_SCALE_BLOCK)] as number);
      const index = kContiguous ? row * k + kk : kk * rows + row;
      values[index] = (values[index] as number) * scale;
    }
  }
}
