import { describe, expect, it } from "vitest";
import { fuzz } from "./fuzz.js";
import { libdevice, tensor } from "./reference/index.js";

// The libdevice calls in the differential tester: the generator draws them, and the independent
// evaluator (reference/libdevice.ts, from the README's Semantics) agrees with both phases.
describe("libdevice calls in random kernels", () => {
  // Seed 45 draws 11 libdevice steps in 100 kernels with 30 step kinds (seed 39, 3); the draws
  // change when STEP_KINDS grows.
  it("are drawn and agree with the independent evaluator (100 kernels, seed 45)", async () => {
    const report = await fuzz({ runs: 100, seed: 45 });
    expect(report.failure?.failure.summary ?? null).toBeNull();
    expect(report.steps.libdevice).toBeGreaterThan(3);
  }, 300_000);

  it("the evaluator rounds each element once to the dtype", () => {
    const out = libdevice("asin", tensor([0.5, 2], [2], "f16"));
    expect([...out.data]).toEqual([1072 / 2048, Number.NaN]); // asin(0.5) = 0.52359877..., 1072.3 f16 ulps of 2^-11
  });
});
