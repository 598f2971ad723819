import { DTYPE_BYTES, type Dtype, Tensor } from "@kb/tensor";
import { describe, expect, test } from "vitest";
import dropout, { dropoutReference, philoxRand } from "../04-low-memory-dropout.js";
import { runTutorial } from "./run-tutorial.js";

/** The tutorial through the runtime API, phase 2 and the load comparison included (run-tutorial.ts). */
const run = (params: Record<string, unknown>, topologyName = "default") =>
  runTutorial(dropout, params, topologyName);

describe("tutorial 04: seeded dropout with tl.rand", { timeout: 60_000 }, () => {
  // 1000 elements in blocks of 64: 16 programs, the last holds 40.
  test.each([
    ["f32", "default"],
    ["f16", "default"],
    ["f32", "ref-cube"],
    ["f16", "ref-cube"],
  ])(
    "%s on %s.yaml: output PASSes phase 2 against a host Philox; phase 1 saw every load",
    async (dtype, name) => {
      const { report, phases, dmaBytes } = await run({ n_elements: 1000, BLOCK_SIZE: 64, dtype }, name);
      expect(report.outputs.map((output) => [output.name, output.pass, output.mismatches])).toEqual([
        ["output", true, 0],
      ]);
      expect(phases).toMatchObject({ observed: 16, compared: 16, differing: 0, unmatched: 0 });
      // x read once and output written once: 2 x 1000 elements (the masked-off tail never moves).
      expect(dmaBytes).toBe(2 * 1000 * DTYPE_BYTES[dtype as Dtype]);
    },
  );

  test("the host Philox gives Random123's known answer and Triton's uniform conversion", () => {
    // philox4x32_10(counter 0, key 0)[0] = 0x6627e8d5, positive as an i32.
    expect(philoxRand(0, 0)).toBe(Math.fround(Math.fround(0x6627e8d5) * Math.fround(4.6566127342e-10)));
  });

  test("the mask is a function of the seed: the same seed keeps the same elements, about 1 - p of them", () => {
    const x = Tensor.fromArray(new Array(4096).fill(1), [4096], "f32");
    const kept = (seed: number, p: number) =>
      [...dropoutReference(x, p, seed, "f32").toFloat64Array()].map((v): number => (v === 0 ? 0 : 1));
    expect(kept(123, 0.5)).toEqual(kept(123, 0.5));
    expect(kept(123, 0.5)).not.toEqual(kept(124, 0.5));
    // Kept fraction within 4 standard errors (sqrt(0.25 / 4096) = 0.0078) of 1 - p.
    const fraction = kept(123, 0.5).reduce((a, b) => a + b, 0) / 4096;
    expect(Math.abs(fraction - 0.5)).toBeLessThan(0.032);
    // Kept elements are scaled by 1 / (1 - p): 1 / 0.75.
    expect([...dropoutReference(x, 0.25, 7, "f32").toFloat64Array()].filter((v) => v !== 0)[0]).toBe(
      Math.fround(1 / 0.75),
    );
  });
});
