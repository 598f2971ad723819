import { type Dtype, Tensor } from "@kb/tensor";
import { describe, expect, test } from "vitest";
import { type AttentionConfig, decodeAttentionKernel, prefillAttentionKernel } from "../lib/llm/attention.js";
import { columnBlock, concatColumns } from "../lib/llm/ranks.js";
import { attentionReference, ropeReference } from "../lib/llm/reference.js";
import { ropeKernel, ropeTables } from "../lib/llm/rope.js";
import { allPass, kernelSim, verdicts } from "./llm-support.js";

// RoPE with the KV cache write, and the two flash-attention kernels (causal prefill, decode over
// the cache), each against a host reference of that kernel alone: exact softmax in f64 over the
// same q, K and V, rounded once to the output's dtype.

const random = (shape: number[], dtype: Dtype, seed: number) => Tensor.random(shape, dtype, { seed });

/** Rows `[from, from + count)` of `t` replaced by the rows of `rows`. */
function withRows(t: Tensor, from: number, rows: Tensor): Tensor {
  const out = new Tensor(t.shape, t.dtype, t.bytes.slice());
  const rowBytes = t.nbytes / (t.shape[0] as number);
  out.bytes.set(rows.bytes, from * rowBytes);
  return out;
}

/** Rows `[from, from + count)` of `t`. */
function rowsOf(t: Tensor, from: number, count: number): Tensor {
  const rowBytes = t.nbytes / (t.shape[0] as number);
  return new Tensor(
    [count, ...t.shape.slice(1)],
    t.dtype,
    t.bytes.slice(from * rowBytes, (from + count) * rowBytes),
  );
}

describe("RoPE and the KV cache write", () => {
  test("at position 1 (angle 1 rad, headDim 2): q [1, 0] -> [cos 1, sin 1], k [0, 1] -> [-sin 1, cos 1] in cache row 1, v copied", async () => {
    const k = await kernelSim();
    const tables = ropeTables(2, 10, 1, 1, 1);
    const QKV = await k.put(Tensor.fromArray([1, 0, 0, 1, 5, 6], [1, 6], "f32"), "qkv");
    const Cos = await k.put(Tensor.fromArray(tables.cos, [1, 1], "f32"), "cos");
    const Sin = await k.put(Tensor.fromArray(tables.sin, [1, 1], "f32"), "sin");
    const Kc = await k.put(Tensor.zeros([2, 2], "f32"), "k_cache");
    const Vc = await k.put(Tensor.zeros([2, 2], "f32"), "v_cache");
    const config = { heads: 1, kvHeads: 1, headDim: 2, batch: 1, tokens: 1, ctx: 2, pos0: 1, blockRows: 1 };
    await k.sim.launch(ropeKernel, { grid: k.grid, args: [[{ QKV, Cos, Sin, Kc, Vc }], config] });
    const [c, s] = [Math.cos(1), Math.sin(1)];
    const report = await k.verify({
      qkv: [QKV, Tensor.fromArray([c, s, 0, 1, 5, 6], [1, 6], "f32")],
      k_cache: [Kc, Tensor.fromArray([0, 0, -s, c], [2, 2], "f32")],
      v_cache: [Vc, Tensor.fromArray([0, 0, 5, 6], [2, 2], "f32")],
    });
    expect(verdicts(report)).toEqual(allPass("k_cache", "qkv", "v_cache"));
  });

  for (const dtype of ["f32", "bf16", "f16"] as const) {
    test(`2 sequences of 3 new tokens after 2 cached ones in ${dtype}: q rotated in place, k and v into cache rows 2..4 and 7..9`, async () => {
      const k = await kernelSim();
      const [heads, kvHeads, headDim, batch, tokens, pos0] = [2, 1, 8, 2, 3, 2];
      const ctx = pos0 + tokens;
      const width = (heads + 2 * kvHeads) * headDim;
      const qkv = random([batch * tokens, width], dtype, 1);
      const past = {
        k: random([batch * ctx, headDim], dtype, 2),
        v: random([batch * ctx, headDim], dtype, 3),
      };
      const tables = ropeTables(headDim, 10000, batch, tokens, pos0);
      const QKV = await k.put(qkv, "qkv");
      const Kc = await k.put(past.k, "k_cache");
      const Vc = await k.put(past.v, "v_cache");
      const parts = [
        {
          QKV,
          Cos: await k.put(Tensor.fromArray(tables.cos, [batch * tokens, headDim / 2], "f32"), "cos"),
          Sin: await k.put(Tensor.fromArray(tables.sin, [batch * tokens, headDim / 2], "f32"), "sin"),
          Kc,
          Vc,
        },
      ];
      const config = { heads, kvHeads, headDim, batch, tokens, ctx, pos0, blockRows: 2 };
      await k.sim.launch(ropeKernel, { grid: k.grid, args: [parts, config] });

      const dims = { hidden: 0, heads, kvHeads, headDim, ffn: 0, eps: 0, ropeTheta: 10000 };
      const shape = { batch, tokens, pos0 };
      const rotate = (start: number, n: number) => {
        const x = columnBlock(qkv, start * headDim, n * headDim).toFloat64Array();
        ropeReference(x, n, dims, shape);
        return Tensor.fromArray(x, [batch * tokens, n * headDim], dtype);
      };
      const q = rotate(0, heads);
      const kNew = rotate(heads, kvHeads);
      const vNew = columnBlock(qkv, (heads + kvHeads) * headDim, kvHeads * headDim);
      const rest = { tensor: qkv, start: heads * headDim, count: 2 * kvHeads * headDim };
      const expectedQkv = concatColumns([{ tensor: q, start: 0, count: heads * headDim }, rest], dtype);
      let expectedK = past.k;
      let expectedV = past.v;
      for (let b = 0; b < batch; b++) {
        expectedK = withRows(expectedK, b * ctx + pos0, rowsOf(kNew, b * tokens, tokens));
        expectedV = withRows(expectedV, b * ctx + pos0, rowsOf(vNew, b * tokens, tokens));
      }
      const report = await k.verify({
        qkv: [QKV, expectedQkv],
        k_cache: [Kc, expectedK],
        v_cache: [Vc, expectedV],
      });
      expect(verdicts(report)).toEqual(allPass("k_cache", "qkv", "v_cache"));
    });
  }
});

/** The attention config of `heads` / `kvHeads` heads of `headDim`, blocks of `block`. */
function attentionConfig(
  heads: number,
  kvHeads: number,
  headDim: number,
  batch: number,
  tokens: number,
  ctx: number,
  block: number,
): AttentionConfig {
  return {
    heads,
    kvHeads,
    headDim,
    batch,
    tokens,
    ctx,
    blockM: block,
    blockN: block,
    scale: 1 / Math.sqrt(headDim),
  };
}

describe("flash attention", () => {
  test("causal prefill with zero queries averages the visible values: rows [2, 0], [3, 1], [4, 2], [5, 3]", async () => {
    // Blocks of 2: the second query block masks its diagonal block after an unmasked one, so the
    // online softmax rescales once.
    const k = await kernelSim();
    const QKV = await k.put(Tensor.zeros([4, 6], "f32"), "qkv");
    const Kc = await k.put(Tensor.fromArray([1, 2, 3, 4, 5, 6, 7, 8], [4, 2], "f32"), "k_cache");
    const Vc = await k.put(Tensor.fromArray([2, 0, 4, 2, 6, 4, 8, 6], [4, 2], "f32"), "v_cache");
    const O = k.empty([4, 2], "f32", "o");
    const config = attentionConfig(1, 1, 2, 1, 4, 4, 2);
    await k.sim.launch(prefillAttentionKernel, { grid: k.grid, args: [[{ QKV, Kc, Vc, O }], config] });
    const expected = Tensor.fromArray([2, 0, 3, 1, 4, 2, 5, 3], [4, 2], "f32");
    expect(verdicts(await k.verify({ o: [O, expected] }))).toEqual(allPass("o"));
  });

  for (const dtype of ["f32", "bf16", "f16"] as const) {
    test(`causal prefill, GQA (4 query heads on 2 KV heads), 2 sequences of 20 tokens, blocks of 8, ${dtype}`, async () => {
      const k = await kernelSim();
      const [heads, kvHeads, headDim, batch, tokens] = [4, 2, 16, 2, 20];
      const qkv = random([batch * tokens, (heads + 2 * kvHeads) * headDim], dtype, 4);
      const kc = random([batch * tokens, kvHeads * headDim], dtype, 5);
      const vc = random([batch * tokens, kvHeads * headDim], dtype, 6);
      const O = k.empty([batch * tokens, heads * headDim], dtype, "o");
      const parts = [{ QKV: await k.put(qkv, "qkv"), Kc: await k.put(kc, "k"), Vc: await k.put(vc, "v"), O }];
      const config = attentionConfig(heads, kvHeads, headDim, batch, tokens, tokens, 8);
      await k.sim.launch(prefillAttentionKernel, { grid: k.grid, args: [parts, config] });
      const dims = { hidden: 0, heads, kvHeads, headDim, ffn: 0, eps: 0, ropeTheta: 1 };
      const q = columnBlock(qkv, 0, heads * headDim).toFloat64Array();
      const out = attentionReference(
        q,
        kc.toFloat64Array(),
        vc.toFloat64Array(),
        (b, p) => b * tokens + p,
        dims,
        {
          batch,
          tokens,
          pos0: 0,
        },
      );
      const expected = Tensor.fromArray(out, [batch * tokens, heads * headDim], dtype);
      expect(verdicts(await k.verify({ o: [O, expected] }))).toEqual(allPass("o"));
    });

    test(`decode over a KV cache of 19 positions, GQA, 3 sequences, blocks of 8, ${dtype}`, async () => {
      const k = await kernelSim();
      const [heads, kvHeads, headDim, batch, ctx] = [4, 2, 16, 3, 19];
      const qkv = random([batch, (heads + 2 * kvHeads) * headDim], dtype, 7);
      const kc = random([batch * ctx, kvHeads * headDim], dtype, 8);
      const vc = random([batch * ctx, kvHeads * headDim], dtype, 9);
      const O = k.empty([batch, heads * headDim], dtype, "o");
      const parts = [{ QKV: await k.put(qkv, "qkv"), Kc: await k.put(kc, "k"), Vc: await k.put(vc, "v"), O }];
      const config = attentionConfig(heads, kvHeads, headDim, batch, 1, ctx, 8);
      await k.sim.launch(decodeAttentionKernel, { grid: k.grid, args: [parts, config] });
      const dims = { hidden: 0, heads, kvHeads, headDim, ffn: 0, eps: 0, ropeTheta: 1 };
      const q = columnBlock(qkv, 0, heads * headDim).toFloat64Array();
      // The new token is at position ctx - 1 and sees every cached row.
      const out = attentionReference(
        q,
        kc.toFloat64Array(),
        vc.toFloat64Array(),
        (b, p) => b * ctx + p,
        dims,
        {
          batch,
          tokens: 1,
          pos0: ctx - 1,
        },
      );
      const expected = Tensor.fromArray(out, [batch, heads * headDim], dtype);
      expect(verdicts(await k.verify({ o: [O, expected] }))).toEqual(allPass("o"));
    });
  }
});
