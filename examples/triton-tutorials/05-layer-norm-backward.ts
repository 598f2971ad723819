import { type DeviceTensor, defineBench } from "@kb/runtime";
import { type Dtype, Tensor } from "@kb/tensor";
import type { TensorHandle, TL } from "@kb/tl";
import * as z from "zod";
import { commonParams, firstCube, gridOf } from "../../benches/lib/params.js";
import { nextPowerOf2 } from "./02-fused-softmax.js";

// Triton's tutorial 05 backward: _layer_norm_bwd_dx_fused and _layer_norm_bwd_dwdb written with
// @kb/tl. Program `row` computes its row of DX and its row's contribution to dW and dB, and adds
// that contribution into row `row % GROUP_SIZE_M` of the partial buffers DW, DB [GROUP_SIZE_M, N]
// under a spin lock, as Triton's tutorial writes it:
//
//   while tl.atomic_cas(Lock, 0, 1) == 1: pass
//   count = tl.load(Count)
//   if count == 0: tl.atomic_xchg(Count, 1)
//   else: partial_dw += tl.load(DW, mask=mask); partial_db += tl.load(DB, mask=mask)
//   tl.store(DW, partial_dw, mask=mask); tl.store(DB, partial_db, mask=mask)
//   tl.atomic_xchg(Lock, 0)
//
// The lock and the counters are i32 device tensors the host zeroes, so phase 1 knows every old
// value an atomic returns and the kernel branches on them as Triton's does; the programs that
// share a lock take it in the order the simulation's atomics reach the memory, and phase 2 replays
// that order (`--check-phases` compares the old values). The second kernel sums DW, DB's rows in
// f32 into FINAL_DW, FINAL_DB [N].
//
// Differences from Triton: the lock's offsets are a [1] tile (`Lock + lock_id` in Triton); the
// loop's scratch is released each spin; mean and rstd are [1] tiles broadcast over the row.

/**
 * DX[row] and the row's dW, dB contributions for X, DY, DX `[M, N]`, W `[N]`, Mean, Rstd `[M]`
 * (f32), added into row `row % GROUP_SIZE_M` of DW, DB `[GROUP_SIZE_M, N]` under `Lock[lock_id]`,
 * with `Lock[GROUP_SIZE_M + lock_id]` counting whether that row was written yet.
 */
export async function layerNormBwdDxFused(
  tl: TL,
  DX: DeviceTensor,
  DY: DeviceTensor,
  DW: DeviceTensor,
  DB: DeviceTensor,
  X: DeviceTensor,
  W: DeviceTensor,
  Mean: DeviceTensor,
  Rstd: DeviceTensor,
  Lock: DeviceTensor,
  N: number,
  GROUP_SIZE_M: number,
  BLOCK_SIZE_N: number,
): Promise<void> {
  const row = tl.programId(0);
  const mask = await tl.lt(tl.arange(0, BLOCK_SIZE_N), N);
  const lock_id = row % GROUP_SIZE_M;
  const lock = tl.full([1], lock_id, "i32"); // Lock + lock_id
  const count = tl.full([1], GROUP_SIZE_M + lock_id, "i32"); // Count = Lock + GROUP_SIZE_M
  // Load data to SRAM, as f32.
  const load32 = async (ptr: number, dtype: Dtype) => {
    const a = await tl.load(ptr, [BLOCK_SIZE_N], dtype, { mask, other: 0 });
    return dtype === "f32" ? a : tl.cast(a, "f32");
  };
  const x = await load32(X.at(row, 0), X.dtype);
  const dy = await load32(DY.at(row, 0), DY.dtype);
  const w = await load32(W.at(0), W.dtype);
  const mean = await tl.load(Mean.at(row), [1], "f32");
  const rstd = await tl.load(Rstd.at(row), [1], "f32");
  // Compute dx.
  const zero = tl.zeros([BLOCK_SIZE_N], "f32");
  const xhat = await tl.where(mask, await tl.mul(await tl.sub(x, mean), rstd), zero);
  const wdy = await tl.where(mask, await tl.mul(w, dy), zero);
  const c1 = await tl.div(await tl.sum(await tl.mul(xhat, wdy), 0), N);
  const c2 = await tl.div(await tl.sum(wdy, 0), N);
  const dx = await tl.mul(await tl.sub(wdy, await tl.fma(xhat, c1, c2)), rstd);
  // Write dx.
  await tl.store(DX.at(row, 0), DX.dtype === "f32" ? dx : await tl.cast(dx, DX.dtype), { mask });
  // Accumulate partial sums for dw / db.
  const cast = (a: TensorHandle) => (W.dtype === "f32" ? a : tl.cast(a, W.dtype));
  let partial_dw = await cast(await tl.mul(dy, xhat));
  let partial_db = await cast(dy);
  for (;;) {
    const mark = tl.scratchMark();
    const old = (await tl.atomicCas(Lock, 0, 1, { offsets: lock })).data.getFlat(0);
    tl.scratchRelease(mark);
    if (old !== 1) break;
  }
  const seen = (await tl.load(Lock, [1], "i32", { offsets: count })).data.getFlat(0);
  // First store doesn't accumulate.
  if (seen === 0) {
    await tl.atomicXchg(Lock, 1, { offsets: count });
  } else {
    const dw = await tl.load(DW.at(lock_id, 0), [BLOCK_SIZE_N], DW.dtype, { mask, other: 0 });
    const db = await tl.load(DB.at(lock_id, 0), [BLOCK_SIZE_N], DB.dtype, { mask, other: 0 });
    partial_dw = await tl.add(partial_dw, dw);
    partial_db = await tl.add(partial_db, db);
  }
  await tl.store(DW.at(lock_id, 0), partial_dw, { mask });
  await tl.store(DB.at(lock_id, 0), partial_db, { mask });
  // Release the lock.
  await tl.atomicXchg(Lock, 0, { offsets: lock });
}

/** FINAL_DW, FINAL_DB `[N]` = the f32 column sums of DW, DB `[M, N]`, BLOCK_SIZE_N columns a program. */
export async function layerNormBwdDwdb(
  tl: TL,
  DW: DeviceTensor,
  DB: DeviceTensor,
  FINAL_DW: DeviceTensor,
  FINAL_DB: DeviceTensor,
  M: number,
  N: number,
  BLOCK_SIZE_M: number,
  BLOCK_SIZE_N: number,
): Promise<void> {
  const c0 = tl.programId(0) * BLOCK_SIZE_N;
  const cols = tl.expandDims(await tl.add(tl.arange(0, BLOCK_SIZE_N), c0), 0); // [None, :]
  const colMask = await tl.lt(cols, N);
  const dw = tl.zeros([BLOCK_SIZE_M, BLOCK_SIZE_N], "f32");
  const db = tl.zeros([BLOCK_SIZE_M, BLOCK_SIZE_N], "f32");
  for (let i = 0; i < M; i += BLOCK_SIZE_M) {
    const mark = tl.scratchMark();
    const rows = tl.expandDims(await tl.add(tl.arange(0, BLOCK_SIZE_M), i), 1); // [:, None]
    const mask = await tl.and(await tl.lt(rows, M), colMask);
    for (const [from, acc] of [
      [DW, dw],
      [DB, db],
    ] as const) {
      const block = await tl.load(from.at(i, c0), [BLOCK_SIZE_M, BLOCK_SIZE_N], from.dtype, {
        stride: N,
        mask,
        other: 0,
      });
      await tl.add(acc, from.dtype === "f32" ? block : await tl.cast(block, "f32"), { out: acc });
    }
    tl.scratchRelease(mark);
  }
  const store = async (to: DeviceTensor, acc: TensorHandle) => {
    const sum = tl.reshape(await tl.sum(acc, 0), [BLOCK_SIZE_N]);
    const mask = tl.reshape(colMask, [BLOCK_SIZE_N]);
    await tl.store(to.at(c0), to.dtype === "f32" ? sum : await tl.cast(sum, to.dtype), { mask });
  };
  await store(FINAL_DW, dw);
  await store(FINAL_DB, db);
}

/** The host's dX, dW, dB of layer norm (f64 from the stored inputs, Mean and Rstd). */
export function layerNormBackward(x: Tensor, dy: Tensor, w: Tensor, mean: Tensor, rstd: Tensor) {
  const [M, N] = x.shape as [number, number];
  const [xd, dyd, wd, md, rd] = [x, dy, w, mean, rstd].map((t) => t.toFloat64Array()) as Float64Array[];
  const dx = new Float64Array(M * N);
  const dw = new Float64Array(N);
  const db = new Float64Array(N);
  for (let r = 0; r < M; r++) {
    const xhat = (c: number) => (xd![r * N + c]! - md![r]!) * rd![r]!;
    const wdy = (c: number) => wd![c]! * dyd![r * N + c]!;
    let c1 = 0;
    let c2 = 0;
    for (let c = 0; c < N; c++) {
      c1 += xhat(c) * wdy(c);
      c2 += wdy(c);
    }
    c1 /= N;
    c2 /= N;
    for (let c = 0; c < N; c++) {
      dx[r * N + c] = (wdy(c) - (xhat(c) * c1 + c2)) * rd![r]!;
      dw[c] = dw[c]! + dyd![r * N + c]! * xhat(c);
      db[c] = db[c]! + dyd![r * N + c]!;
    }
  }
  return { dx, dw, db };
}

/** Tutorial 05 backward: dX, dW, dB of layer norm over X `[M, N]`, one program per row, a spin lock per group. */
export default defineBench({
  name: "triton-05-layer-norm-backward",
  description:
    "Triton tutorial 05 backward: dX of the layer norm per row and dW, dB summed over the rows, one program per row adding its row's dW, dB into row (row % GROUP_SIZE_M) of partial buffers under a spin lock (tl.atomicCas / tl.atomicXchg, as Triton's tutorial), then a second kernel summing the partial rows in f32 (all in the HBM of the grid's first cube).",
  params: z.object({
    M: z.number().int().positive().default(1151).describe("Rows of X (Triton's tutorial: 1151)."),
    N: z.number().int().positive().default(1000).describe("Columns of X, the normalized axis."),
    GROUP_SIZE_M: z
      .number()
      .int()
      .positive()
      .optional()
      .describe("Partial rows of dW, dB (Triton's: 64 for N <= 8192, 96 to 4096, 128 to 1024, else 256)."),
    BLOCK_SIZE_M: z.number().int().positive().default(32).describe("The dwdb kernel: rows a step."),
    BLOCK_SIZE_N: z.number().int().positive().default(128).describe("The dwdb kernel: columns a program."),
    ...commonParams,
  }),
  async run(sim, p) {
    const dtype: Dtype = p.dtype;
    const grid = gridOf(sim, p);
    const where = firstCube(grid);
    const GROUP_SIZE_M = p.GROUP_SIZE_M ?? (p.N <= 1024 ? 256 : p.N <= 4096 ? 128 : p.N <= 8192 ? 96 : 64);
    const x = sim.random([p.M, p.N], dtype, { seed: p.seed, low: -3.2, high: -1.4 });
    const dy = sim.random([p.M, p.N], dtype, { seed: p.seed + 1, low: -0.1, high: 0.1 });
    const w = sim.random([p.N], dtype, { seed: p.seed + 2, low: 0, high: 2 });
    // The forward's statistics, f32, as the forward kernel stored them.
    const xs = x.toFloat64Array();
    const means = Array.from({ length: p.M }, (_, r) => {
      let sum = 0;
      for (let c = 0; c < p.N; c++) sum += xs[r * p.N + c] as number;
      return sum / p.N;
    });
    const rstds = means.map((m, r) => {
      let squares = 0;
      for (let c = 0; c < p.N; c++) squares += ((xs[r * p.N + c] as number) - m) ** 2;
      return 1 / Math.sqrt(squares / p.N + 1e-5);
    });
    const mean = Tensor.fromArray(means, [p.M], "f32");
    const rstd = Tensor.fromArray(rstds, [p.M], "f32");
    const X = await sim.toDevice(x, { ...where, name: "x" });
    const DY = await sim.toDevice(dy, { ...where, name: "dy" });
    const W = await sim.toDevice(w, { ...where, name: "w" });
    const Mean = await sim.toDevice(mean, { ...where, name: "mean" });
    const Rstd = await sim.toDevice(rstd, { ...where, name: "rstd" });
    const Lock = await sim.toDevice(Tensor.zeros([2 * GROUP_SIZE_M], "i32"), { ...where, name: "locks" });
    const DX = sim.empty([p.M, p.N], dtype, { ...where, name: "dx" });
    const DW = await sim.toDevice(Tensor.zeros([GROUP_SIZE_M, p.N], dtype), { ...where, name: "_dw" });
    const DB = await sim.toDevice(Tensor.zeros([GROUP_SIZE_M, p.N], dtype), { ...where, name: "_db" });
    const FINAL_DW = sim.empty([p.N], dtype, { ...where, name: "dw" });
    const FINAL_DB = sim.empty([p.N], dtype, { ...where, name: "db" });
    await sim.launch(layerNormBwdDxFused, {
      grid,
      programs: [p.M],
      args: [DX, DY, DW, DB, X, W, Mean, Rstd, Lock, p.N, GROUP_SIZE_M, nextPowerOf2(p.N)],
      name: "layer_norm_bwd_dx_fused",
    });
    await sim.launch(layerNormBwdDwdb, {
      grid,
      programs: [Math.ceil(p.N / p.BLOCK_SIZE_N)],
      args: [DW, DB, FINAL_DW, FINAL_DB, GROUP_SIZE_M, p.N, p.BLOCK_SIZE_M, p.BLOCK_SIZE_N],
      name: "layer_norm_bwd_dwdb",
    });
    const ref = () => layerNormBackward(x, dy, w, mean, rstd);
    return {
      check: {
        dx: { actual: DX, reference: () => Tensor.fromArray(ref().dx, [p.M, p.N], dtype) },
        dw: { actual: FINAL_DW, reference: () => Tensor.fromArray(ref().dw, [p.N], dtype) },
        db: { actual: FINAL_DB, reference: () => Tensor.fromArray(ref().db, [p.N], dtype) },
      },
    };
  },
});
