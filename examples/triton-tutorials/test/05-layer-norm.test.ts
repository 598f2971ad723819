import { DTYPE_BYTES, type Dtype } from "@kb/tensor";
import { describe, expect, test } from "vitest";
import layerNorm, { layerNormBlockSize } from "../05-layer-norm.js";
import { runTutorial } from "./run-tutorial.js";

describe("tutorial 05: layer norm forward, one program per row in masked blocks", { timeout: 30_000 }, () => {
  test("BLOCK_SIZE is Triton's: min(64 KB of elements, next_power_of_2(N))", () => {
    expect(layerNormBlockSize(1000, "f16")).toBe(1024);
    expect(layerNormBlockSize(20000, "f32")).toBe(16384);
    expect(layerNormBlockSize(20000, "f16")).toBe(32768);
  });

  // 6 rows of 100 columns: in blocks of 32 (three full blocks and one of 4 columns, 28 masked
  // off) or in one block of 128 (28 masked off).
  test.each([
    ["f32", "default", 32, 4],
    ["f16", "default", undefined, 1],
    ["bf16", "ref-cube", 32, 4],
  ])(
    "%s on %s.yaml, BLOCK_SIZE %s: y, mean and rstd PASS phase 2, phase 1 observed every load as phase 2 copied it",
    async (dtype, name, BLOCK_SIZE, blocks) => {
      const { outputs, phases, dmaBytes } = await runTutorial(
        layerNorm,
        { M: 6, N: 100, BLOCK_SIZE, dtype },
        name,
      );
      expect(outputs).toEqual([
        ["mean", true, 0],
        ["rstd", true, 0],
        ["y", true, 0],
      ]);
      // Per program and block: x for the mean, x for the variance, then w, b and x.
      expect(phases).toMatchObject({
        observed: 6 * blocks * 5,
        compared: 6 * blocks * 5,
        differing: 0,
        unmatched: 0,
      });
      // Per row the DMAs read x three times, w and b once, write y once (100 elements each, the
      // blocks' masked-off columns never move) and store one f32 mean and one f32 rstd.
      expect(dmaBytes).toBe(6 * (6 * 100 * DTYPE_BYTES[dtype as Dtype] + 2 * 4));
    },
  );
});
