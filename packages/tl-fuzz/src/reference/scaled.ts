// `tl.dotScaled` of packages/tl/README.md ("dotScaled"): each operand element times 2^(s - 127),
// s the unsigned byte of its block's e8m0 scale (one per 32 elements along K; 255 is NaN), or, for
// nvfp4 (f8e4m3 scales), times its block's f8e4m3 scale value (one per 16 along K), then
// the f32 GEMM of `dot` with an f32 result; A and B may be of different formats, each decoded from
// its own. Written from that text alone.

import { invalid } from "./dtype.js";
import { dot } from "./gemm.js";
import { formatShape, fromRounded, type RefTensor } from "./tensor.js";

/** Elements along K per e8m0 scale. */
const BLOCK = 32;
/** Elements along K per f8e4m3 scale (nvfp4). */
const NV_BLOCK = 16;

/** The dtype of each operand format. */
const FORMAT_DTYPES = Object.freeze({ e4m3: "f8e4m3", e5m2: "f8e5m2", e2m1: "f4e2m1" } as const);

/** A format of {@link dotScaled}. */
export type ScaledFormat = keyof typeof FORMAT_DTYPES;

/** The value of the scale `element`: an f8e4m3 value as is, else an e8m0 byte as an i8 element. */
function scaleOf(element: number, dtype: string): number {
  if (dtype === "f8e4m3") return element;
  const byte = element < 0 ? element + 256 : element;
  return byte === 255 ? Number.NaN : 2 ** (byte - 127);
}

/**
 * `x` `[rows, K]` (`byRow`) or `[K, cols]` times its scales `[rows or cols, K / 32]` (e8m0) or
 * `[rows or cols, K / 16]` (f8e4m3), as an f32 tensor (exact: a narrow float times a power of two,
 * or an fp4 value times an fp8 one).
 */
function scaled(x: RefTensor, scales: RefTensor | null, byRow: boolean): RefTensor {
  const [r, c] = x.shape as [number, number];
  const k = byRow ? c : r;
  const data = Float64Array.from(x.data);
  if (scales !== null) {
    const lines = byRow ? r : c;
    const block = scales.dtype === "f8e4m3" ? NV_BLOCK : BLOCK;
    if (k % block !== 0 || formatShape(scales.shape) !== formatShape([lines, k / block])) {
      throw invalid("dotScaled", `scales ${formatShape(scales.shape)} do not fit ${formatShape(x.shape)}.`);
    }
    for (let i = 0; i < r; i++) {
      for (let j = 0; j < c; j++) {
        const line = byRow ? i : j;
        const kk = byRow ? j : i;
        const s = scaleOf(scales.data[line * (k / block) + Math.floor(kk / block)] as number, scales.dtype);
        data[i * c + j] = Math.fround((data[i * c + j] as number) * s);
      }
    }
  }
  return fromRounded(data, [r, c], "f32");
}

/**
 * `tl.dotScaled(a, aScale, aFormat, b, bScale, bFormat, acc)`: f32 `[M, N]`. The two formats may
 * differ (each operand holds its own format's elements).
 */
export function dotScaled(
  a: RefTensor,
  aScale: RefTensor | null,
  aFormat: ScaledFormat,
  b: RefTensor,
  bScale: RefTensor | null,
  bFormat: ScaledFormat,
  acc?: RefTensor,
): RefTensor {
  for (const [name, x, format] of [
    ["a", a, aFormat],
    ["b", b, bFormat],
  ] as const) {
    const dtype = FORMAT_DTYPES[format];
    if (x.dtype !== dtype) {
      throw invalid("dotScaled", `format ${format} takes ${dtype} elements, but ${name} is ${x.dtype}.`);
    }
  }
  return dot(scaled(a, aScale, true), scaled(b, bScale, false), acc === undefined ? {} : { acc });
}
