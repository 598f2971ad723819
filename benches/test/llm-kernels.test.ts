import { type Dtype, Tensor } from "@kb/tensor";
import { describe, expect, test } from "vitest";
import { linearKernel, swigluKernel } from "../lib/llm/linear.js";
import { addRmsNormKernel, residualAddKernel, rmsNormKernel } from "../lib/llm/norm.js";
import { rmsNormReference } from "../lib/llm/reference.js";
import { add, matmul } from "../lib/reference.js";
import { allPass, kernelSim, verdicts } from "./llm-support.js";

// Each kernel of benches/lib/llm alone against a host reference of that kernel (f64, rounded where
// the kernel stores): the norms, the residual add and the projections here; RoPE and attention in
// llm-attention.test.ts. Shapes leave partial blocks and tiles, and 4 PEs take the work items
// round-robin, so the edges and the wrap-around both run.

const DTYPES = ["f32", "bf16"] as const;

const random = (shape: number[], dtype: Dtype, seed: number, low = -1, high = 1) =>
  Tensor.random(shape, dtype, { seed, low, high });
const round = (values: Float64Array, shape: number[], dtype: Dtype) => Tensor.fromArray(values, shape, dtype);

describe("RMSNorm, add + RMSNorm and the residual add", () => {
  test("RMSNorm of [[3, 4], [1, 1]] with weights [1, 2] and eps 0 is [3, 8] / sqrt(12.5) and [1, 2]", async () => {
    const k = await kernelSim();
    const X = await k.put(Tensor.fromArray([3, 4, 1, 1], [2, 2], "f32"), "x");
    const W = await k.put(Tensor.fromArray([1, 2], [1, 2], "f32"), "w");
    const Y = k.empty([2, 2], "f32", "y");
    await k.sim.launch(rmsNormKernel, { grid: k.grid, args: [[{ X, W, Y }], { blockRows: 1, eps: 0 }] });
    const s = Math.sqrt(12.5);
    const expected = Tensor.fromArray([3 / s, 8 / s, 1, 2], [2, 2], "f32");
    expect(verdicts(await k.verify({ y: [Y, expected] }))).toEqual(allPass("y"));
  });

  for (const dtype of DTYPES) {
    test(`RMSNorm of 7 rows of 32 in ${dtype} (blocks of 2 rows) matches the f64 reference`, async () => {
      const k = await kernelSim();
      const x = random([7, 32], dtype, 1, -2, 2);
      const w = random([1, 32], dtype, 2, 0.5, 1.5);
      const Y = k.empty([7, 32], dtype, "y");
      const parts = [{ X: await k.put(x, "x"), W: await k.put(w, "w"), Y }];
      await k.sim.launch(rmsNormKernel, { grid: k.grid, args: [parts, { blockRows: 2, eps: 1e-5 }] });
      const expected = round(rmsNormReference(x.toFloat64Array(), w.toFloat64Array(), 1e-5), [7, 32], dtype);
      expect(verdicts(await k.verify({ y: [Y, expected] }))).toEqual(allPass("y"));
    });

    test(`add + RMSNorm in ${dtype}: H = X + O in f32, HN = rmsnorm(H) x W`, async () => {
      const k = await kernelSim();
      const x = random([5, 24], dtype, 3);
      const o = random([5, 24], "f32", 4);
      const w = random([1, 24], dtype, 5, 0.5, 1.5);
      const H = k.empty([5, 24], "f32", "h");
      const HN = k.empty([5, 24], dtype, "hn");
      const parts = [{ X: await k.put(x, "x"), O: await k.put(o, "o"), W: await k.put(w, "w"), H, HN }];
      await k.sim.launch(addRmsNormKernel, { grid: k.grid, args: [parts, { blockRows: 2, eps: 1e-5 }] });
      const h = add(x, o, "f32");
      const hn = round(rmsNormReference(h.toFloat64Array(), w.toFloat64Array(), 1e-5), [5, 24], dtype);
      expect(verdicts(await k.verify({ h: [H, h], hn: [HN, hn] }))).toEqual(allPass("h", "hn"));
    });

    test(`the residual add Y = X + D (f32 in, ${dtype} out) rounds once`, async () => {
      const k = await kernelSim();
      const x = random([9, 16], "f32", 6);
      const d = random([9, 16], "f32", 7);
      const Y = k.empty([9, 16], dtype, "y");
      const parts = [{ X: await k.put(x, "x"), D: await k.put(d, "d"), Y }];
      await k.sim.launch(residualAddKernel, { grid: k.grid, args: [parts, { blockRows: 4, eps: 1e-5 }] });
      expect(verdicts(await k.verify({ y: [Y, add(x, d, dtype)] }))).toEqual(allPass("y"));
    });
  }

  test("add + RMSNorm of X [1, 2] and O [2, 2] by hand: H = [3, 4], HN = [3, 8] / sqrt(12.5)", async () => {
    const k = await kernelSim();
    const X = await k.put(Tensor.fromArray([1, 2], [1, 2], "f32"), "x");
    const O = await k.put(Tensor.fromArray([2, 2], [1, 2], "f32"), "o");
    const W = await k.put(Tensor.fromArray([1, 2], [1, 2], "f32"), "w");
    const H = k.empty([1, 2], "f32", "h");
    const HN = k.empty([1, 2], "f32", "hn");
    await k.sim.launch(addRmsNormKernel, {
      grid: k.grid,
      args: [[{ X, O, W, H, HN }], { blockRows: 1, eps: 0 }],
    });
    const s = Math.sqrt(12.5);
    const report = await k.verify({
      h: [H, Tensor.fromArray([3, 4], [1, 2], "f32")],
      hn: [HN, Tensor.fromArray([3 / s, 8 / s], [1, 2], "f32")],
    });
    expect(verdicts(report)).toEqual(allPass("h", "hn"));
  });
});

describe("the projections: tiled tl.dot and SwiGLU", () => {
  test("[[1, 2], [3, 4]] @ [[5, 6], [7, 8]] = [[19, 22], [43, 50]] with 1 x 1 x 1 tiles", async () => {
    const k = await kernelSim();
    const A = await k.put(Tensor.fromArray([1, 2, 3, 4], [2, 2], "f32"), "a");
    const W = await k.put(Tensor.fromArray([5, 6, 7, 8], [2, 2], "f32"), "w");
    const C = k.empty([2, 2], "f32", "c");
    await k.sim.launch(linearKernel, { grid: k.grid, args: [[{ A, W, C }], { tm: 1, tn: 1, tk: 1 }] });
    const expected = Tensor.fromArray([19, 22, 43, 50], [2, 2], "f32");
    expect(verdicts(await k.verify({ c: [C, expected] }))).toEqual(allPass("c"));
  });

  for (const dtype of DTYPES) {
    for (const out of [dtype, "f32"] as const) {
      test(`A [40, 48] @ W [48, 72] in ${dtype} into ${out} (tiles 32 x 32 x 16, partial at every edge)`, async () => {
        const k = await kernelSim();
        const a = random([40, 48], dtype, 8);
        const w = random([48, 72], dtype, 9, -0.25, 0.25);
        const C = k.empty([40, 72], out, "c");
        const parts = [{ A: await k.put(a, "a"), W: await k.put(w, "w"), C }];
        await k.sim.launch(linearKernel, { grid: k.grid, args: [parts, { tm: 32, tn: 32, tk: 16 }] });
        expect(verdicts(await k.verify({ c: [C, matmul(a, w, out)] }))).toEqual(allPass("c"));
      });
    }

    test(`SwiGLU silu(A @ Wg) x (A @ Wu) in ${dtype} (tiles 16 x 16 x 16 over [24, 32] @ [32, 40])`, async () => {
      const k = await kernelSim();
      const a = random([24, 32], dtype, 10);
      const wg = random([32, 40], dtype, 11, -0.3, 0.3);
      const wu = random([32, 40], dtype, 12, -0.3, 0.3);
      const Act = k.empty([24, 40], dtype, "act");
      const parts = [{ A: await k.put(a, "a"), Wg: await k.put(wg, "wg"), Wu: await k.put(wu, "wu"), Act }];
      await k.sim.launch(swigluKernel, { grid: k.grid, args: [parts, { tm: 16, tn: 16, tk: 16 }] });
      const gate = matmul(a, wg, "f32").toFloat64Array();
      const up = matmul(a, wu, "f32").toFloat64Array();
      const act = gate.map((g, i) => (g / (1 + Math.exp(-g))) * (up[i] as number));
      expect(verdicts(await k.verify({ act: [Act, round(act, [24, 40], dtype)] }))).toEqual(allPass("act"));
    });
  }

  test("SwiGLU of a = 1, wg = 2, wu = 3 is silu(2) x 3 = 6 / (1 + e^-2)", async () => {
    const k = await kernelSim();
    const one = (v: number, name: string) => k.put(Tensor.fromArray([v], [1, 1], "f32"), name);
    const Act = k.empty([1, 1], "f32", "act");
    const parts = [{ A: await one(1, "a"), Wg: await one(2, "wg"), Wu: await one(3, "wu"), Act }];
    await k.sim.launch(swigluKernel, { grid: k.grid, args: [parts, { tm: 1, tn: 1, tk: 1 }] });
    const expected = Tensor.fromArray([6 / (1 + Math.exp(-2))], [1, 1], "f32");
    expect(verdicts(await k.verify({ act: [Act, expected] }))).toEqual(allPass("act"));
  });
});
