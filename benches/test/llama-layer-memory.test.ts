import { type HostDataMode, Simulator } from "@kb/runtime";
import { describe, expect, test } from "vitest";
import llamaLayer from "../llama-layer.js";
import { topologyFile } from "./llm-support.js";

// llama-layer's weights are deferred tensors (issue 38, point 3): a timing run never makes them.

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
