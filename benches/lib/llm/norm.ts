import type { DeviceTensor } from "@kb/runtime";
import type { Dtype } from "@kb/tensor";
import type { TensorHandle, TL } from "@kb/tl";
import { cubeIndex } from "../cube-parts.js";

// The normalisation and residual kernels of a decoder layer: RMSNorm, the residual add fused
// with the next RMSNorm, and the last residual add. Each program takes blocks of `blockRows`
// rows round-robin over the PEs of its cube and does its arithmetic in f32.

/** `x` as f32 (a cast unless it is f32 already). */
export async function toF32(tl: TL, x: TensorHandle): Promise<TensorHandle> {
  return x.dtype === "f32" ? x : tl.cast(x, "f32");
}

/** `x` (f32) as `dtype` for a store (a cast unless `dtype` is f32). */
export async function toDtype(tl: TL, x: TensorHandle, dtype: Dtype): Promise<TensorHandle> {
  return dtype === "f32" ? x : tl.cast(x, dtype);
}

/** `x * rsqrt(mean(x^2) + eps) * w` per row of the f32 block `x` `[rows, H]`, `w` `[1, H]` f32. */
async function rmsNormRows(tl: TL, x: TensorHandle, w: TensorHandle, eps: number): Promise<TensorHandle> {
  const hidden = x.shape[1] as number;
  const meanSquare = await tl.div(await tl.sum(await tl.mul(x, x), 1), hidden); // [rows, 1]
  const inverse = await tl.rsqrt(await tl.add(meanSquare, eps));
  return tl.mul(await tl.mul(x, inverse), w);
}

/** One rank's operands of {@link rmsNormKernel}: `Y = rmsnorm(X) * W`, X Y `[T, H]`, W `[H]`. */
export interface RmsNormPart {
  readonly X: DeviceTensor;
  readonly W: DeviceTensor;
  readonly Y: DeviceTensor;
}

/** Row-block size and epsilon of the normalisation kernels. */
export interface NormConfig {
  readonly blockRows: number;
  readonly eps: number;
}

/** RMSNorm: `Y[r] = X[r] / sqrt(mean(X[r]^2) + eps) * W`, in f32, stored in Y's dtype. */
export async function rmsNormKernel(
  tl: TL,
  parts: readonly (RmsNormPart | null)[],
  config: NormConfig,
): Promise<void> {
  const part = parts[cubeIndex(tl)];
  if (part === null || part === undefined) return;
  const { X, W, Y } = part;
  const [rows, hidden] = X.shape as [number, number];
  const step = config.blockRows * tl.numPrograms(0);
  if (tl.programId(0) * config.blockRows >= rows) return;
  const w = await toF32(tl, await tl.load(W, [1, hidden], W.dtype));
  for (let r0 = tl.programId(0) * config.blockRows; r0 < rows; r0 += step) {
    const mark = tl.scratchMark();
    const n = Math.min(config.blockRows, rows - r0);
    const x = await toF32(tl, await tl.load(X.at(r0, 0), [n, hidden], X.dtype));
    const y = await rmsNormRows(tl, x, w, config.eps);
    await tl.store(Y.at(r0, 0), await toDtype(tl, y, Y.dtype));
    tl.scratchRelease(mark);
  }
}

/**
 * One rank's operands of {@link addRmsNormKernel}: `H = X + O` (the residual, O the attention
 * block's f32 output after the all-reduce) and `HN = rmsnorm(H) * W`.
 */
export interface AddRmsNormPart {
  readonly X: DeviceTensor;
  readonly O: DeviceTensor;
  readonly W: DeviceTensor;
  readonly H: DeviceTensor;
  readonly HN: DeviceTensor;
}

/**
 * The residual add fused with the next RMSNorm: `H = X + O` rounded to H's dtype and stored, then
 * `HN = rmsnorm(H) * W` from the rounded `H` (what a separate norm kernel would load).
 */
export async function addRmsNormKernel(
  tl: TL,
  parts: readonly (AddRmsNormPart | null)[],
  config: NormConfig,
): Promise<void> {
  const part = parts[cubeIndex(tl)];
  if (part === null || part === undefined) return;
  const { X, O, W, H, HN } = part;
  const [rows, hidden] = X.shape as [number, number];
  const step = config.blockRows * tl.numPrograms(0);
  if (tl.programId(0) * config.blockRows >= rows) return;
  const w = await toF32(tl, await tl.load(W, [1, hidden], W.dtype));
  for (let r0 = tl.programId(0) * config.blockRows; r0 < rows; r0 += step) {
    const mark = tl.scratchMark();
    const n = Math.min(config.blockRows, rows - r0);
    const x = await toF32(tl, await tl.load(X.at(r0, 0), [n, hidden], X.dtype));
    const o = await toF32(tl, await tl.load(O.at(r0, 0), [n, hidden], O.dtype));
    const h = await toDtype(tl, await tl.add(x, o), H.dtype);
    await tl.store(H.at(r0, 0), h);
    const y = await rmsNormRows(tl, await toF32(tl, h), w, config.eps);
    await tl.store(HN.at(r0, 0), await toDtype(tl, y, HN.dtype));
    tl.scratchRelease(mark);
  }
}

/** One rank's operands of {@link residualAddKernel}: `Y = X + D`, D f32 (the MLP's reduced output). */
export interface ResidualPart {
  readonly X: DeviceTensor;
  readonly D: DeviceTensor;
  readonly Y: DeviceTensor;
}

/** The last residual add: `Y = X + D` in f32, stored in Y's dtype. */
export async function residualAddKernel(
  tl: TL,
  parts: readonly (ResidualPart | null)[],
  config: NormConfig,
): Promise<void> {
  const part = parts[cubeIndex(tl)];
  if (part === null || part === undefined) return;
  const { X, D, Y } = part;
  const [rows, hidden] = X.shape as [number, number];
  const step = config.blockRows * tl.numPrograms(0);
  for (let r0 = tl.programId(0) * config.blockRows; r0 < rows; r0 += step) {
    const mark = tl.scratchMark();
    const n = Math.min(config.blockRows, rows - r0);
    const x = await toF32(tl, await tl.load(X.at(r0, 0), [n, hidden], X.dtype));
    const d = await toF32(tl, await tl.load(D.at(r0, 0), [n, hidden], D.dtype));
    await tl.store(Y.at(r0, 0), await toDtype(tl, await tl.add(x, d), Y.dtype));
    tl.scratchRelease(mark);
  }
}
