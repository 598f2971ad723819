import { describe, expect, test } from "vitest";
import histogram, { histogramReference, histogramValues } from "../histogram.js";
import { runTutorial } from "./run-tutorial.js";

describe("histogram: tl.atomicAdd from many programs into shared bins", { timeout: 60_000 }, () => {
  // 1000 values in blocks of 64: 16 programs (the last holds 40) spread over the grid's PEs, all
  // adding into the same 8 bins.
  test.each([
    ["f32", "default"],
    ["f16", "ref-cube"],
  ])(
    "%s on %s.yaml: counts and sums PASS phase 2, every atomic's old values as phase 2's",
    async (dtype, name) => {
      const params = { n: 1000, NUM_BINS: 8, BLOCK: 64, dtype };
      const { outputs, phases } = await runTutorial(histogram, params, name);
      expect(outputs).toEqual([
        ["counts", true, 0],
        ["sums", true, 0],
      ]);
      // 16 programs x (the values, the weights, and the old values of its two atomics).
      expect(phases).toMatchObject({ observed: 64, compared: 64, differing: 0, unmatched: 0 });
    },
  );

  test("the reference counts every value once, out-of-range ones in the end bins", () => {
    const values = histogramValues(1000, 8, 0);
    const { counts } = histogramReference(values, 8);
    expect(counts.reduce((a, b) => a + b, 0)).toBe(1000);
    expect(counts[0]).toBe(values.filter((v) => v <= 0).length);
    expect(counts[7]).toBe(values.filter((v) => v >= 7).length);
  });
});
