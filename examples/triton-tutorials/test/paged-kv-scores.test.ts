import { describe, expect, test } from "vitest";
import paged, { pagedLayout } from "../paged-kv-scores.js";
import { runTutorial } from "./run-tutorial.js";

// A kernel of a Triton user's own: decode scores over a paged fp8 key cache (gathers whose
// offsets come from a loaded block table, fp8 dequantization, a masked store).
describe("paged-KV scores: gathers through a loaded block table, fp8 keys", { timeout: 60_000 }, () => {
  test.each([
    ["f32", "default"],
    ["f16", "ref-cube"],
    ["bf16", "default"],
  ])("%s on %s.yaml: out PASSes phase 2, every gathered block as phase 2 copied it", async (dtype, name) => {
    const params = { seqs: 5, MAX_BLOCKS: 4, BLOCK_SIZE: 8, HEAD_DIM: 32, dtype };
    const { lens } = pagedLayout(5, 4, 8, 1); // seed 1, the default
    const blocks = lens.reduce((sum, len) => sum + Math.ceil(len / 8), 0);
    const { outputs, phases } = await runTutorial(paged, params, name);
    expect(outputs).toEqual([["out", true, 0]]);
    // Each program loads its length and q; each block its table entry and its gathered keys.
    expect(phases).toMatchObject({ observed: 2 * 5 + 2 * blocks, differing: 0, unmatched: 0 });
  });
});
