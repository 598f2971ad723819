// The block scales of a scaled GEMM (tl.dotScaled): one e8m0 byte per MX_SCALE_BLOCK elements
// along k (mxfp8, mxfp4), or one f8e4m3 value per NV_SCALE_BLOCK (nvfp4, the record's
// scale_dtype), applied to the decoded operands before the f32 GEMM.
import { scaleBlockOf } from "@kb/oplog";
import { decodeNarrowFloat } from "@kb/tensor";

/** The value of the e8m0 byte `byte`: `2^(byte - 127)`, NaN for 255. */
export function e8m0Value(byte: number): number {
  return byte === 255 ? Number.NaN : 2 ** (byte - 127);
}

/** The value of one scale byte: e8m0 (`scaleDtype` absent) or an f8e4m3 value (nvfp4). */
function scaleValue(byte: number, scaleDtype: "f8e4m3" | undefined): number {
  return scaleDtype === "f8e4m3" ? decodeNarrowFloat(byte, "f8e4m3") : e8m0Value(byte);
}

/**
 * Multiplies each element of an operand by its block's scale, in place. `values` holds the operand
 * as stored: `rows x k` when `kContiguous` (A, or B stored transposed as `[n, k]`), else `k x rows`
 * (B as `[k, n]`, or A stored transposed as `[k, m]`); `scales` holds `rows x ceil(k / block)`
 * bytes, row-major, `block` 32 for e8m0 and 16 for f8e4m3 (`scaleDtype`): the scale of (row, kk)
 * is byte `row * ceil(k / block) + floor(kk / block)`. e8m0 is exact while the product stays in
 * f32's range (an fp8 or fp4 value times a power of two); an f8e4m3 scale times an fp4 value is
 * exact too (at most 4 + 2 significant bits).
 */
export function applyBlockScales(
  values: Float32Array,
  scales: Uint8Array,
  rows: number,
  k: number,
  kContiguous: boolean,
  scaleDtype?: "f8e4m3",
): void {
  const block = scaleBlockOf(scaleDtype);
  const blocks = Math.ceil(k / block);
  for (let row = 0; row < rows; row++) {
    for (let kk = 0; kk < k; kk++) {
      const scale = scaleValue(scales[row * blocks + Math.floor(kk / block)] as number, scaleDtype);
      const index = kContiguous ? row * k + kk : kk * rows + row;
      values[index] = (values[index] as number) * scale;
    }
  }
}
