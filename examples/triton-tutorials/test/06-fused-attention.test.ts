import { describe, expect, test } from "vitest";
import attention from "../06-fused-attention.js";
import { runTutorial } from "./run-tutorial.js";

/** The tutorial through the runtime API, phase 2 and the load comparison included (run-tutorial.ts). */
const run = (params: Record<string, unknown>, topologyName = "default") =>
  runTutorial(attention, params, topologyName);

// 2 heads of 256 x 32, blocks of 64 query rows and 32 keys: 4 x 2 = 8 programs, a K loop of
// 8 steps (non-causal) or 2 (m + 1) steps for query block m (causal), each step a load of K and
// of V and two dots (q @ k^T, p @ v). The causal diagonal region is two K blocks: the first
// partly masked, the second masked entirely for the block's first 32 rows.
const SMALL = { Z: 1, H: 2, N_CTX: 256, HEAD_DIM: 32, BLOCK_M: 64, BLOCK_N: 32 };
const HEADS = 2;
const STEPS = { causal: HEADS * 2 * (1 + 2 + 3 + 4), full: HEADS * 4 * 8 };

describe("tutorial 06: fused attention with an online softmax", { timeout: 60_000 }, () => {
  test.each([
    ["f32", true, "default"],
    ["f16", false, "default"],
    ["bf16", true, "ref-cube"],
    ["f16", true, "ref-cube"],
  ] as const)(
    "%s, causal %s on %s.yaml: Out PASSes phase 2, and phase 1 observed every load as phase 2 copied it",
    async (dtype, causal, name) => {
      const { report, phases, dots } = await run({ ...SMALL, causal, dtype }, name);
      expect(report.outputs.map((output) => [output.name, output.pass, output.mismatches])).toEqual([
        ["Out", true, 0],
      ]);
      const steps = causal ? STEPS.causal : STEPS.full;
      // 8 programs x (their Q block + a K and a V block per step).
      expect(phases).toMatchObject({ observed: 8 + 2 * steps, compared: 8 + 2 * steps, differing: 0 });
      expect(dots).toBe(2 * steps);
    },
  );

  test("the causal kernel stops at the diagonal: about half the dots of the non-causal one", async () => {
    const full = await run({ ...SMALL, causal: false, dtype: "f16" });
    const causal = await run({ ...SMALL, causal: true, dtype: "f16" });
    expect([full.dots, causal.dots]).toEqual([2 * STEPS.full, 2 * STEPS.causal]);
    // (Mb + 1) / (2 Mb) of the K steps for Mb query blocks per head: 5 / 8 here, 1/2 as Mb grows.
    expect(causal.dots / full.dots).toBe(5 / 8);
  });
});
