import { MemorySink, OpLogger } from "@kb/oplog";
import { replay, Simulator, verifyOutcome } from "@kb/runtime";
import { Tensor } from "@kb/tensor";
import { describe, expect, test } from "vitest";
import { rankDims } from "../lib/llm/config.js";
import { columnBlock, concatColumns } from "../lib/llm/ranks.js";
import { attentionReference, rmsNormReference, ropeReference } from "../lib/llm/reference.js";
import llamaLayer from "../llama-layer.js";
import { topologyFile } from "./llm-support.js";

/** Runs llama-layer (phase 1 with an op log), replays phase 2 and verifies its outputs. */
async function runLayer(params: Record<string, unknown>) {
  const sink = new MemorySink();
  const sim = await Simulator.fromTopology(topologyFile("default"), { opLogger: new OpLogger(sink) });
  const outcome = await llamaLayer.run(sim, llamaLayer.params.parse(params));
  const phase2 = replay(sim.hostWrites, sink.records);
  return { outcome, verification: await verifyOutcome(outcome ?? undefined, phase2.store) };
}

describe("llama-layer on default.yaml (tp = 2: its two cubes)", () => {
  for (const dtype of ["f32", "f16", "bf16"] as const) {
    for (const phase of ["prefill", "decode"] as const) {
      test(`tiny ${phase} in ${dtype} PASSes against the host reference of the whole layer`, async () => {
        const { verification } = await runLayer({ preset: "tiny", dtype, phase });
        expect(verification.outputs.map((o) => [o.name, o.pass, o.firstMismatch])).toEqual([
          ["out.rank0", true, null],
          ["out.rank1", true, null],
        ]);
      });
    }
  }

  test("tp = 1 and two layers back to back PASS; the table has every launch of both layers", async () => {
    const { outcome, verification } = await runLayer({
      preset: "tiny",
      dtype: "f16",
      tp: 1,
      layers: 2,
      seq: 24,
    });
    expect(verification.pass).toBe(true);
    const rows = outcome?.report?.rows ?? [];
    const kernels = rows.filter((row) => row[0] === 0).map((row) => row[1]);
    // tp = 1: no all-reduce launches, the communication row is 0.
    expect(kernels).toEqual([
      "rmsnorm",
      "qkv-proj",
      "rope-kv-cache",
      "attention-prefill",
      "o-proj",
      "add-rmsnorm",
      "gate-up-swiglu",
      "down-proj",
      "residual-add",
      "communication (all-reduces)",
      "layer total",
    ]);
    expect(rows.find((row) => row[0] === 0 && row[1] === "communication (all-reduces)")?.[2]).toBe(0);
    expect(rows.filter((row) => row[0] === 1)).toHaveLength(11);
    expect(rows.at(-1)?.[1]).toBe("2 layers total");
  });

  test("tp = 2 puts an all-reduce after o-proj and after down; shares of a layer add up to its total", async () => {
    const { outcome } = await runLayer({ preset: "tiny", dtype: "f32", seq: 16 });
    const rows = outcome?.report?.rows ?? [];
    const kernels = rows.map((row) => row[1]);
    expect(kernels.indexOf("all-reduce o")).toBe(kernels.indexOf("o-proj") + 1);
    expect(kernels.indexOf("all-reduce down")).toBe(kernels.indexOf("down-proj") + 1);
    const launches = rows.slice(0, 11);
    const total = rows.find((row) => row[1] === "layer total")?.[2] as number;
    const sum = launches.reduce((s, row) => s + (row[2] as number), 0);
    expect(sum).toBeLessThanOrEqual(total + 0.01); // gaps between launches count in the total only
    expect(sum).toBeGreaterThan(0.5 * total);
    for (const row of launches)
      expect(String(row[4])).toMatch(/^(hbm-hotspot|hbm-bandwidth|link|compute|latency|unsaturated|idle)/);
  });

  test("a tp that does not divide the KV heads is refused, naming the divisors", async () => {
    expect(() =>
      rankDims({ hidden: 64, heads: 8, kvHeads: 4, headDim: 8, ffn: 96, eps: 1e-5, ropeTheta: 1e4 }, 3),
    ).toThrow(/tp=3 must divide kvHeads \(4\) or be a multiple of it/);
  });
});

describe("the layer's host reference pieces, by hand", () => {
  test("RMSNorm of [3, 4] is [3, 4] / sqrt(12.5 + eps) times the weights", () => {
    const out = rmsNormReference(new Float64Array([3, 4]), new Float64Array([1, 2]), 0);
    expect(out[0]).toBeCloseTo(3 / Math.sqrt(12.5), 12);
    expect(out[1]).toBeCloseTo((2 * 4) / Math.sqrt(12.5), 12);
  });

  test("RoPE rotates each (i, i + half) pair by position x theta^(-2i / headDim)", () => {
    // One head of 4 at position 1 with theta 100: pair 0 turns by 1 rad, pair 1 by 1 / 10 rad.
    const x = new Float64Array([1, 1, 0, 0]);
    const dims = { hidden: 4, heads: 1, kvHeads: 1, headDim: 4, ffn: 4, eps: 0, ropeTheta: 100 };
    ropeReference(x, 1, dims, { batch: 1, tokens: 1, pos0: 1 });
    expect([...x].map((v) => Number(v.toFixed(12)))).toEqual(
      [Math.cos(1), Math.cos(0.1), Math.sin(1), Math.sin(0.1)].map((v) => Number(v.toFixed(12))),
    );
  });

  test("causal attention: the first query sees only the first key; equal scores average the values", () => {
    const dims = { hidden: 2, heads: 1, kvHeads: 1, headDim: 1, ffn: 1, eps: 0, ropeTheta: 1 };
    const q = new Float64Array([0, 0]); // zero scores: uniform weights over the visible keys
    const v = new Float64Array([2, 4]);
    const out = attentionReference(q, new Float64Array([1, 1]), v, (_b, p) => p, dims, {
      batch: 1,
      tokens: 2,
      pos0: 0,
    });
    expect([...out]).toEqual([2, 3]);
  });

  test("column blocks of the weights are disjoint and concatenate back to the whole", () => {
    const w = Tensor.fromArray([0, 1, 2, 3, 4, 5, 6, 7], [2, 4], "f32");
    expect([...columnBlock(w, 1, 2).toFloat64Array()]).toEqual([1, 2, 5, 6]);
    const back = concatColumns(
      [
        { tensor: w, start: 0, count: 2 },
        { tensor: w, start: 2, count: 2 },
      ],
      "f32",
    );
    expect(back.equals(w)).toBe(true);
  });
});
