import type { DeviceTensor } from "@kb/runtime";
import type { TensorHandle, TL } from "@kb/tl";
import { cubeIndex } from "../cube-parts.js";
import { toDtype } from "./norm.js";

// The projections of a decoder layer, Triton's matmul (tutorial 03) with one output tile per
// step: the rank's output tiles go round-robin to the PEs of its cube; each gathers tl.dot over
// the K steps into an f32 accumulator from A and W tiles loaded with their row strides.

/** Tile sizes of the projections: `[tm, tn, tk]` of the output and the reduction. */
export interface LinearTiles {
  readonly tm: number;
  readonly tn: number;
  readonly tk: number;
}

/** One rank's operands of {@link linearKernel}: `C = A @ W`, A `[T, K]`, W `[K, N]`, C `[T, N]`. */
export interface LinearPart {
  readonly A: DeviceTensor;
  readonly W: DeviceTensor;
  readonly C: DeviceTensor;
}

/**
 * `acc (+)= A[i0:i0+m, :] @ W[w0:w0+K, j0:j0+n]` over K (A's columns), tiles of `tk`; `acc` f32
 * `[m, n]`. `w0` (default 0) is the first row of W's block: a grouped GEMM's expert in a stack.
 */
export async function accumulate(
  tl: TL,
  A: DeviceTensor,
  W: DeviceTensor,
  i0: number,
  j0: number,
  acc: TensorHandle,
  tk: number,
  w0 = 0,
): Promise<TensorHandle> {
  const [m, n] = acc.shape as [number, number];
  const K = A.shape[1] as number;
  const N = W.shape[1] as number;
  let sum = acc;
  for (let k0 = 0; k0 < K; k0 += tk) {
    const mark = tl.scratchMark();
    const k = Math.min(tk, K - k0);
    const a = await tl.load(A.at(i0, k0), [m, k], A.dtype, { stride: K });
    const w = await tl.load(W.at(w0 + k0, j0), [k, n], W.dtype, { stride: N });
    sum = await tl.dot(a, w, sum); // accumulates in place: sum stays below the mark
    tl.scratchRelease(mark);
  }
  return sum;
}

/**
 * A projection `C = A @ W`: column-parallel (QKV, the rank's heads) when W is a block of the
 * weight's columns, row-parallel (o-proj, down: C an f32 partial sum for the all-reduce) when it
 * is a block of its rows. The accumulator is cast to C's dtype.
 */
export async function linearKernel(
  tl: TL,
  parts: readonly (LinearPart | null)[],
  tiles: LinearTiles,
): Promise<void> {
  const part = parts[cubeIndex(tl)];
  if (part === null || part === undefined) return;
  const { A, W, C } = part;
  const rows = A.shape[0] as number;
  const N = W.shape[1] as number;
  const tilesN = tl.cdiv(N, tiles.tn);
  const count = tl.cdiv(rows, tiles.tm) * tilesN;
  for (let t = tl.programId(0); t < count; t += tl.numPrograms(0)) {
    const mark = tl.scratchMark();
    const i0 = Math.floor(t / tilesN) * tiles.tm;
    const j0 = (t % tilesN) * tiles.tn;
    const m = Math.min(tiles.tm, rows - i0);
    const n = Math.min(tiles.tn, N - j0);
    const acc = await accumulate(tl, A, W, i0, j0, tl.zeros([m, n], "f32"), tiles.tk);
    await tl.store(C.at(i0, j0), await toDtype(tl, acc, C.dtype), { stride: N });
    tl.scratchRelease(mark);
  }
}

/**
 * One rank's operands of {@link swigluKernel}: `Act = silu(A @ Wg) * (A @ Wu)`, Wg and Wu `[H, F/tp]`
 * (the rank's columns of the gate and up weights), Act `[T, F/tp]`.
 */
export interface SwigluPart {
  readonly A: DeviceTensor;
  readonly Wg: DeviceTensor;
  readonly Wu: DeviceTensor;
  readonly Act: DeviceTensor;
}

/**
 * The gate and up projections with SwiGLU fused on their accumulators: per output tile, two f32
 * accumulators (gate, up), then `silu(gate) * up` in f32, cast once to Act's dtype. The gate and
 * up activations never go to HBM.
 */
export async function swigluKernel(
  tl: TL,
  parts: readonly (SwigluPart | null)[],
  tiles: LinearTiles,
): Promise<void> {
  const part = parts[cubeIndex(tl)];
  if (part === null || part === undefined) return;
  const { A, Wg, Wu, Act } = part;
  const rows = A.shape[0] as number;
  const N = Wg.shape[1] as number;
  const tilesN = tl.cdiv(N, tiles.tn);
  const count = tl.cdiv(rows, tiles.tm) * tilesN;
  for (let t = tl.programId(0); t < count; t += tl.numPrograms(0)) {
    const mark = tl.scratchMark();
    const i0 = Math.floor(t / tilesN) * tiles.tm;
    const j0 = (t % tilesN) * tiles.tn;
    const m = Math.min(tiles.tm, rows - i0);
    const n = Math.min(tiles.tn, N - j0);
    const gate = await accumulate(tl, A, Wg, i0, j0, tl.zeros([m, n], "f32"), tiles.tk);
    const up = await accumulate(tl, A, Wu, i0, j0, tl.zeros([m, n], "f32"), tiles.tk);
    const act = await tl.mul(await tl.silu(gate), up);
    await tl.store(Act.at(i0, j0), await toDtype(tl, act, Act.dtype), { stride: N });
    tl.scratchRelease(mark);
  }
}
