import { type HostDataMode, Simulator } from "@kb/runtime";
import { describe, expect, test, vi } from "vitest";
import { PRESETS } from "../lib/llm/config.js";
import llamaLayer from "../llama-layer.js";
import llamaPp from "../llama-pp.js";
import llamaServe from "../llama-serve.js";
import { topologyFile } from "./llm-support.js";

// The Llama benches' weights are deferred tensors (issue 38, point 3): a timing run never makes them.

/** Runs llama-layer (phase 1 only) with its weights' bytes made (`full`) or not (`timing-only`). */
async function run(hostData: HostDataMode, params: Record<string, unknown>) {
  const sim = await Simulator.fromTopology(topologyFile("default"), { hostData });
  const outcome = await llamaLayer.run(sim, llamaLayer.params.parse(params));
  const results = sim.results("llama-layer", params);
  return { json: JSON.stringify({ results, report: outcome?.report }), pages: sim.memory.pageCount };
}

describe("llama-layer's timing-only weights", () => {
  test("give byte-identical results and report for two tiny layers, without the weights' pages", async () => {
    const params = { preset: "tiny", layers: 2 };
    const full = await run("full", params);
    const timing = await run("timing-only", params);
    expect(timing.json).toBe(full.json);
    // tiny on default.yaml: tp 2; each rank's f16 shards start on their own 16 KiB store page:
    // w_qkv 128 x 128 (32 KiB, 2 pages), w_o 64 x 128 (1), w_gate, w_up 128 x 128 (2 each),
    // w_down 128 x 128 (2), the two norms (1 each): 11 pages a rank, 22 in all, never written.
    expect(full.pages - timing.pages).toBeGreaterThanOrEqual(22);
  }, 60_000);
});

/**
 * How many host tensors of the tiny preset's gate/up shape (`[hidden, ffn]`, a weight's only:
 * inputs and KV caches are `[rows, hidden]` or narrower) `bench` makes in a phase-1 run.
 */
async function gateUpTensorsMade(
  hostData: HostDataMode,
  bench: typeof llamaPp | typeof llamaServe,
  params: Record<string, unknown>,
): Promise<number> {
  const sim = await Simulator.fromTopology(topologyFile("default"), { hostData });
  const random = vi.spyOn(sim, "random");
  await (bench as typeof llamaPp).run(sim, (bench as typeof llamaPp).params.parse(params));
  const { hidden, ffn } = PRESETS.tiny;
  return random.mock.calls.filter(([shape]) => shape.length === 2 && shape[0] === hidden && shape[1] === ffn)
    .length;
}

describe("llama-pp and llama-serve make their weights only when a run needs the bytes", () => {
  test("llama-pp: none in a timing-only run, gate and up once (not per stage) in a full one", async () => {
    const params = { preset: "tiny", layers: 2, pp: 2, microBatches: 2, batch: 2, dtype: "f32" };
    expect(await gateUpTensorsMade("timing-only", llamaPp, params)).toBe(0);
    expect(await gateUpTensorsMade("full", llamaPp, params)).toBe(2);
  }, 120_000);

  test("llama-serve: none in a timing-only run, gate and up once in a full one", async () => {
    const params = {
      requests: 2,
      rate: 1e5,
      promptMin: 8,
      promptMax: 12,
      outputMin: 1,
      outputMax: 2,
      chunk: 16,
      blockTokens: 8,
      dtype: "f32",
    };
    expect(await gateUpTensorsMade("timing-only", llamaServe, params)).toBe(0);
    expect(await gateUpTensorsMade("full", llamaServe, params)).toBe(2);
  }, 120_000);
});
