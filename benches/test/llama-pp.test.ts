import { describe, expect, test } from "vitest";
import { PRESETS } from "../lib/llm/config.js";
import { type LayerPlan, uploadLayer } from "../lib/llm/layer.js";
import { randomWeights } from "../lib/llm/layer-params.js";
import llamaPp from "../llama-pp.js";
import { kernelSim, launchLogSim } from "./llm-support.js";

// llama-pp end to end: the GPipe order the host program issues, the clock the table reports,
// the stages' placement and transfers, and every micro-batch verified against the host reference.

/** Runs llama-pp with an op log, noting each launch's name and cubes in order, then verifies. */
async function runPp(topology: string, params: Record<string, unknown>) {
  const { sim, launches, verify } = await launchLogSim(topology);
  const outcome = await llamaPp.run(sim, llamaPp.params.parse(params));
  const verification = await verify(outcome ?? undefined);
  return { outcome, launches, verdicts: verification.outputs.map((o) => [o.name, o.pass, o.firstMismatch]) };
}

type Row = readonly (string | number)[];
const rowsOf = (rows: readonly Row[], what: string) => rows.filter((row) => String(row[0]).startsWith(what));

const LAYER = [
  "rmsnorm",
  "qkv-proj",
  "rope-kv-cache",
  "attention-prefill",
  "o-proj",
  "add-rmsnorm",
  "gate-up-swiglu",
  "down-proj",
  "residual-add",
];

describe("llama-pp on default.yaml (1 SIP x 2 cubes: a stage per cube)", () => {
  test("2 stages x 2 micro-batches: the launches run in GPipe order, each on its stage's cube, and every micro-batch PASSes", async () => {
    const { outcome, launches, verdicts } = await runPp("default", {
      preset: "tiny",
      dtype: "f32",
      seq: 16,
      pes: 4,
    });
    expect(verdicts).toEqual([
      ["mb0.rank0", true, null],
      ["mb1.rank0", true, null],
    ]);
    const on = (cube: string) => LAYER.map((kernel) => `${kernel} @ ${cube}`);
    // The transfers are @kb/ccl p2p launches on both cubes (stage 0's rank sends, stage 1's receives).
    const transfer = launches.find((name) => !LAYER.some((kernel) => name.startsWith(`${kernel} @`)));
    expect(transfer).toMatch(/@ sip0\.cube0 sip0\.cube1$/);
    // Each stage is a host stream: stage 0 runs micro-batch 0, sends it, runs micro-batch 1,
    // sends it; stage 1 runs micro-batch 0 once it arrived, then 1. The records come in the
    // order the launches end, so the two streams' launches interleave; each stream's are in order.
    const mine = (cube: string) => launches.filter((name) => name === transfer || name.endsWith(`@ ${cube}`));
    expect(mine("sip0.cube0")).toEqual([
      ...on("sip0.cube0"), // micro-batch 0, stage 0
      transfer,
      ...on("sip0.cube0"), // micro-batch 1, stage 0
      transfer,
    ]);
    expect(launches.filter((name) => name.endsWith("@ sip0.cube1"))).toEqual([
      ...on("sip0.cube1"), // micro-batch 0, stage 1
      ...on("sip0.cube1"), // micro-batch 1, stage 1
    ]);
    const rows = outcome?.report?.rows ?? [];
    expect(outcome?.report?.title).toContain("pp 2 x tp 1 (stage 0: sip0.cube0; stage 1: sip0.cube1)");
    const steps = rows
      .filter((row) => row[0] === "forward" || String(row[0]).startsWith("send "))
      .map((row) => [row[0], row[1], row[2]]);
    expect(steps).toEqual([
      ["forward", 0, 0],
      ["send sip0.cube0 -> sip0.cube1", 0, 0],
      ["forward", 0, 1],
      ["send sip0.cube0 -> sip0.cube1", 0, 1],
      ["forward", 1, 0],
      ["forward", 1, 1],
    ]);
    // The clock: stage 0 sends each micro-batch before its next forward; micro-batch 0 starts on
    // stage 1 when its transfer ends (so it runs while stage 0 runs micro-batch 1), micro-batch 1
    // when both stage 1 is free and its transfer has ended.
    const [f00, s0, f01, s1, f10, f11] = rows.slice(0, 6) as Row[];
    const start = (row: Row | undefined) => row?.[3] as number;
    const end = (row: Row | undefined) => row?.[4] as number;
    expect(start(f00)).toBe(0);
    expect(start(s0)).toBe(end(f00));
    expect(start(f01)).toBe(end(s0));
    expect(start(f10)).toBe(end(s0));
    expect(start(f10)).toBeLessThan(end(f01)); // the stages overlap
    expect(start(s1)).toBe(end(f01));
    expect(start(f11)).toBe(Math.max(end(f10), end(s1)));
    expect(rowsOf(rows, "micro-batch end").map((row) => row[4])).toEqual([end(f10), end(f11)]);
    expect(rowsOf(rows, "pipeline")[0]?.[4]).toBe(end(f11));
    // Each stage's row: busy time and its bubble beside GPipe's 1/3.
    expect(rowsOf(rows, "stage").map((row) => [row[1], row[8]])).toEqual([
      [0, "33.3%"],
      [1, "33.3%"],
    ]);
  }, 120_000); // four layer passes and two transfers: seconds each on a loaded 2-core machine

  test("decode: one token per sequence, 2 micro-batches of 2 sequences over 4 layers (2 per stage) PASS in f16", async () => {
    const { verdicts } = await runPp("default", {
      preset: "tiny",
      dtype: "f16",
      phase: "decode",
      seq: 12,
      batch: 4,
      layers: 4,
      pes: 2,
    });
    expect(verdicts).toEqual([
      ["mb0.rank0", true, null],
      ["mb1.rank0", true, null],
    ]);
  }, 120_000); // four layer passes and two transfers: seconds each on a loaded 2-core machine

  test("pp not dividing layers, microBatches not dividing batch, a pp the grid cannot hold and tp > 1 on cube stages are refused, naming the param", async () => {
    await expect(runPp("default", { preset: "tiny", pp: 2, layers: 3 })).rejects.toThrow(
      /param pp=2 must divide param layers=3/,
    );
    await expect(runPp("default", { preset: "tiny", batch: 3 })).rejects.toThrow(
      /param microBatches=2 must divide param batch=3/,
    );
    await expect(runPp("default", { preset: "tiny", pp: 3, layers: 3 })).rejects.toThrow(
      /param pp=3 does not fit this grid \(1 SIP\(s\) x 2 cube\(s\)\).*pp <= 2/,
    );
    await expect(runPp("default", { preset: "tiny", tp: 2 })).rejects.toThrow(
      /param tp=2 needs stages over SIPs/,
    );
  });
});

describe("one copy of a stage's weights", () => {
  test("uploadLayer with sharing reuses the weights and RoPE tables of the earlier buffers and makes new activations and KV cache", async () => {
    const { sim, grid } = await kernelSim();
    const dims = PRESETS.tiny;
    const plan: LayerPlan = {
      dims,
      shape: { batch: 1, tokens: 4, pos0: 0 },
      phase: "prefill",
      dtype: "f32",
      tiles: { tm: 32, tn: 32, tk: 32 },
      block: 32,
      blockRows: 4,
    };
    const placement = { ranks: [{ sip: 0, cube: 0 }], grid, allReduce: null };
    const weights = randomWeights(sim, dims, "f32", 1);
    const x = sim.random([4, dims.hidden], "f32", { seed: 2 });
    const first = await uploadLayer(sim, placement, plan, weights, x, null);
    const copies = sim.results().hostCopies?.count ?? 0;
    const second = await uploadLayer(sim, placement, plan, weights, x, null, first);
    const [a, b] = [first[0], second[0]];
    for (const field of ["attnNorm", "mlpNorm", "Wqkv", "Cos", "Sin", "Wo", "Wg", "Wu", "Wd"] as const) {
      expect(b?.[field], field).toBe(a?.[field]);
    }
    for (const field of ["X", "Y", "Kc", "Vc", "QKV", "Act"] as const) {
      expect(b?.[field].address, field).not.toBe(a?.[field].address);
    }
    // Three host copies the second time: the input and the two KV caches.
    expect((sim.results().hostCopies?.count ?? 0) - copies).toBe(3);
  });
});

describe("llama-pp on ref-4sip.yaml (a stage per SIP, tp over its cubes)", () => {
  test("pp 2 x tp 2: rank i of SIP 0 sends to rank i of SIP 1; both micro-batches PASS on both ranks", async () => {
    const { outcome, verdicts } = await runPp("ref-4sip", {
      preset: "tiny",
      dtype: "f32",
      seq: 16,
      tp: 2,
      sips: 2,
      cubes: 2,
      pes: 4,
    });
    expect(verdicts).toEqual([
      ["mb0.rank0", true, null],
      ["mb0.rank1", true, null],
      ["mb1.rank0", true, null],
      ["mb1.rank1", true, null],
    ]);
    expect(outcome?.report?.title).toContain(
      "pp 2 x tp 2 (stage 0: sip0.cube0 sip0.cube1; stage 1: sip1.cube0 sip1.cube1)",
    );
    expect(rowsOf(outcome?.report?.rows ?? [], "send").map((row) => row[0])).toEqual([
      "send sip0.cube{0,1} -> sip1.cube{same}",
      "send sip0.cube{0,1} -> sip1.cube{same}",
      "sends (all)",
    ]);
  }, 120_000); // four layer passes and two transfers: seconds each on a loaded 2-core machine

  test("tp beyond a SIP's cubes is refused, naming tp", async () => {
    await expect(runPp("ref-4sip", { preset: "tiny", tp: 8, sips: 2 })).rejects.toThrow(
      /param tp=8 \(ranks per stage\) exceeds the 4 cube\(s\) of a SIP/,
    );
  });
});
