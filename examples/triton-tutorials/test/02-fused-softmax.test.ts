import { DTYPE_BYTES, type Dtype } from "@kb/tensor";
import { describe, expect, test } from "vitest";
import fusedSoftmax, { nextPowerOf2 } from "../02-fused-softmax.js";
import { runTutorial } from "./run-tutorial.js";

describe("tutorial 02: fused softmax, one program per row in a masked block", { timeout: 30_000 }, () => {
  test("BLOCK_SIZE is next_power_of_2(n_cols)", () => {
    expect([1, 2, 3, 100, 128, 129, 781, 1000].map(nextPowerOf2)).toEqual([
      1, 2, 4, 128, 128, 256, 1024, 1024,
    ]);
  });

  // 24 rows of 100 columns in blocks of 128: every row's last 28 elements are masked off.
  test.each([
    ["f32", "default"],
    ["f16", "default"],
    ["bf16", "ref-cube"],
  ])(
    "%s on %s.yaml: y PASSes phase 2, phase 1 observed every load as phase 2 copied it",
    async (dtype, name) => {
      const { outputs, phases, dmaBytes } = await runTutorial(
        fusedSoftmax,
        { n_rows: 24, n_cols: 100, dtype },
        name,
      );
      // The masked-off elements load as -inf: exp(-inf - max) = 0 adds nothing to the sum (with
      // other = 0 each would add exp(-max) to every row's denominator).
      expect(outputs).toEqual([["y", true, 0]]);
      // One load per program (row).
      expect(phases).toMatchObject({ observed: 24, compared: 24, differing: 0, unmatched: 0 });
      // The DMAs read x and write y once: 2 x 24 x 100 elements, not 2 x 24 x 128 (the blocks'
      // masked-off tails never move).
      expect(dmaBytes).toBe(2 * 24 * 100 * DTYPE_BYTES[dtype as Dtype]);
    },
  );

  // ROWS = 4: 10 rows of 100 columns in [4, 128] tiles whose rows lie 100 apart (the tile is wider
  // than the rows); the third program's last two rows and every row's last 28 columns are off.
  test.each([
    ["f32", "default"],
    ["f16", "ref-cube"],
  ])("%s on %s.yaml, 4 rows per program: y PASSes, only the rows' own bytes move", async (dtype, name) => {
    const { outputs, phases, dmaBytes } = await runTutorial(
      fusedSoftmax,
      { n_rows: 10, n_cols: 100, ROWS: 4, dtype },
      name,
    );
    expect(outputs).toEqual([["y", true, 0]]);
    expect(phases).toMatchObject({ observed: 3, compared: 3, differing: 0, unmatched: 0 });
    expect(dmaBytes).toBe(2 * 10 * 100 * DTYPE_BYTES[dtype as Dtype]);
  });
});
