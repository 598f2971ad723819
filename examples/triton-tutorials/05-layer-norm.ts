import { type DeviceTensor, defineBench } from "@kb/runtime";
import type { Dtype } from "@kb/tensor";
import type { TensorHandle, TL } from "@kb/tl";
import * as z from "zod";
import { commonParams, firstCube, gridOf } from "../../benches/lib/params.js";
import { layerNorm } from "../../benches/lib/reference.js";
import { nextPowerOf2 } from "./02-fused-softmax.js";

// Triton's tutorial 05 (layer normalization), the forward kernel _layer_norm_fwd_fused written
// with @kb/tl: one program per row of X [M, N]; three passes over the row in blocks of
// BLOCK_SIZE columns, each block masked to cols < N: the mean (masked-off elements load as 0),
// the variance (x - mean where the mask is on, 0 elsewhere), then y = (x - mean) * rstd * w + b
// with rstd = rsqrt(var + eps). The statistics are computed in f32; the program stores its row's
// Mean and Rstd (f32) for the backward pass, and Y in X's dtype.
//
// Differences from Triton: loads take a block's base pointer and shape (X.at(row, off),
// [BLOCK_SIZE]) rather than a tensor of pointers; the accumulators are updated in place
// (tl.add(acc, a, { out: acc })) where Triton writes _mean += a; w, b and y are cast explicitly
// (tl.cast) where Triton promotes f16 * f32 to f32 and casts on the store.

/** Triton's MAX_FUSED_SIZE: 64 KB of one row's elements; BLOCK_SIZE = min(that, next_power_of_2(N)). */
export function layerNormBlockSize(N: number, dtype: Dtype): number {
  const bytes = dtype === "f32" ? 4 : 2;
  return Math.min(65536 / bytes, nextPowerOf2(N));
}

/** The columns `[off, off + BLOCK_SIZE)` of a row and their mask `cols < N`. */
async function blockMask(tl: TL, off: number, N: number, BLOCK_SIZE: number): Promise<TensorHandle> {
  const cols = await tl.add(tl.arange(0, BLOCK_SIZE), off);
  return tl.lt(cols, N);
}

/**
 * `Y[row] = (X[row] - mean) * rstd * W + B` for X, Y `[M, N]` row-major and W, B `[N]`; program
 * `pid` normalizes row `pid` and stores its mean and `rstd = 1 / sqrt(var + eps)` in `Mean[pid]`
 * and `Rstd[pid]` (f32).
 */
export async function layerNormFwdFused(
  tl: TL,
  X: DeviceTensor,
  Y: DeviceTensor,
  W: DeviceTensor,
  B: DeviceTensor,
  Mean: DeviceTensor,
  Rstd: DeviceTensor,
  N: number,
  eps: number,
  BLOCK_SIZE: number,
): Promise<void> {
  const row = tl.programId(0);
  // A masked block of `dtype` at address `ptr` (masked-off elements 0), as f32.
  const load32 = async (ptr: number, dtype: Dtype, mask: TensorHandle) => {
    const a = await tl.load(ptr, [BLOCK_SIZE], dtype, { mask, other: 0 });
    return dtype === "f32" ? a : tl.cast(a, "f32");
  };
  // Compute the mean.
  const _mean = tl.zeros([BLOCK_SIZE], "f32");
  for (let off = 0; off < N; off += BLOCK_SIZE) {
    const mark = tl.scratchMark();
    const a = await load32(X.at(row, off), X.dtype, await blockMask(tl, off, N, BLOCK_SIZE));
    await tl.add(_mean, a, { out: _mean });
    tl.scratchRelease(mark);
  }
  const mean = await tl.div(await tl.sum(_mean, 0), N);
  // Compute the variance.
  const _var = tl.zeros([BLOCK_SIZE], "f32");
  const zero = tl.zeros([BLOCK_SIZE], "f32");
  for (let off = 0; off < N; off += BLOCK_SIZE) {
    const mark = tl.scratchMark();
    const mask = await blockMask(tl, off, N, BLOCK_SIZE);
    const x = await tl.where(mask, await tl.sub(await load32(X.at(row, off), X.dtype, mask), mean), zero);
    await tl.fma(x, x, _var, { out: _var });
    tl.scratchRelease(mark);
  }
  const variance = await tl.div(await tl.sum(_var, 0), N);
  const rstd = await tl.rsqrt(await tl.add(variance, eps));
  // Write mean / rstd.
  await tl.store(Mean.at(row), mean);
  await tl.store(Rstd.at(row), rstd);
  // Normalize and apply the linear transformation.
  for (let off = 0; off < N; off += BLOCK_SIZE) {
    const mark = tl.scratchMark();
    const mask = await blockMask(tl, off, N, BLOCK_SIZE);
    const w = await load32(W.at(off), W.dtype, mask);
    const b = await load32(B.at(off), B.dtype, mask);
    const x = await load32(X.at(row, off), X.dtype, mask);
    const x_hat = await tl.mul(await tl.sub(x, mean), rstd);
    const y = await tl.fma(x_hat, w, b);
    await tl.store(Y.at(row, off), Y.dtype === "f32" ? y : await tl.cast(y, Y.dtype), { mask });
    tl.scratchRelease(mark);
  }
}

/** Tutorial 05: layer norm forward of X `[M, N]` on a logical grid of `M` programs. */
export default defineBench({
  name: "triton-05-layer-norm",
  description:
    "Triton tutorial 05: the fused layer norm forward Y = (X - mean) * rstd * W + B over the rows of X [M, N], one program per row on a logical grid, mean and variance in f32 over blocks of BLOCK_SIZE columns masked to cols < N, rstd = rsqrt(var + eps); Mean and Rstd [M] (f32) stored too (all in the HBM of the grid's first cube).",
  params: z.object({
    M: z.number().int().positive().default(1151).describe("Rows of X and Y (Triton's tutorial: 1151)."),
    N: z
      .number()
      .int()
      .positive()
      .default(1000)
      .describe("Columns of X and Y, the normalized axis (not a power of two: the last block is masked)."),
    BLOCK_SIZE: z
      .number()
      .int()
      .positive()
      .optional()
      .describe("Columns per block (default Triton's: min(64 KB of elements, next_power_of_2(N)))."),
    eps: z.number().positive().default(1e-5).describe("Added to the variance before the rsqrt."),
    ...commonParams,
  }),
  async run(sim, p) {
    const dtype: Dtype = p.dtype;
    const grid = gridOf(sim, p);
    const where = firstCube(grid);
    // As the tutorial's test: x = -2.3 + 0.5 * randn, w and b random; uniform inputs here.
    const x = sim.random([p.M, p.N], dtype, { seed: p.seed, low: -3.2, high: -1.4 });
    const w = sim.random([p.N], dtype, { seed: p.seed + 1, low: 0, high: 2 });
    const b = sim.random([p.N], dtype, { seed: p.seed + 2, low: -1, high: 1 });
    const X = await sim.toDevice(x, { ...where, name: "x" });
    const W = await sim.toDevice(w, { ...where, name: "w" });
    const B = await sim.toDevice(b, { ...where, name: "b" });
    const Y = sim.empty([p.M, p.N], dtype, { ...where, name: "y" });
    const Mean = sim.empty([p.M], "f32", { ...where, name: "mean" });
    const Rstd = sim.empty([p.M], "f32", { ...where, name: "rstd" });
    const BLOCK_SIZE = p.BLOCK_SIZE ?? layerNormBlockSize(p.N, dtype);
    await sim.launch(layerNormFwdFused, {
      grid,
      programs: [p.M],
      args: [X, Y, W, B, Mean, Rstd, p.N, p.eps, BLOCK_SIZE],
      name: "layer_norm_fwd_fused",
    });
    const ref = () => layerNorm(x, w, b, p.eps, dtype);
    return {
      check: {
        y: { actual: Y, reference: () => ref().y },
        mean: { actual: Mean, reference: () => ref().mean },
        rstd: { actual: Rstd, reference: () => ref().rstd },
      },
    };
  },
});
