import { Tensor } from "@kb/tensor";
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { type BenchCheck, defineBench } from "./bench.js";
import { RunResultsSchema } from "./results.js";
import { runBenchCore } from "./run-bench-core.js";
import { failure } from "./test-support.js";

// Issue 33 point 6: a bench's check states its own tolerance; the results say which was used; a
// bad one is a located error.

/** Copies `values` (f16) to the device as the output and checks it against `expected`. */
function copyBench(values: number[], expected: number[], tolerance?: unknown) {
  return defineBench({
    name: "tolerance",
    params: z.object({}),
    async run(sim) {
      const actual = await sim.toDevice(Tensor.fromArray(values, [values.length], "f16"), { name: "y" });
      const reference = () => Tensor.fromArray(expected, [expected.length], "f16");
      const check = { actual, reference, ...(tolerance === undefined ? {} : { tolerance }) };
      return { check: { y: check as BenchCheck } };
    },
  });
}

const run = (bench: ReturnType<typeof copyBench>, verify = true) =>
  runBenchCore({
    bench,
    topology: "name: tiny\n",
    benchSource: "",
    benchFile: "benches/tolerance.ts",
    packages: {},
    verify,
  });

describe("a bench check's tolerance", () => {
  // 6/1024 against 5/1024: |a - b| = 0.0009765625, 20% of b.
  it("fails with its own tolerance where the f16 default passes, and the JSON says which was used", async () => {
    const loose = await run(copyBench([6 / 1024], [5 / 1024]));
    expect(loose.passed).toBe(true); // bound 1e-3 + 1e-3 x 0.0048828125 = 0.0010048828
    expect(loose.results.verification?.outputs[0]).toMatchObject({
      rtol: 1e-3,
      atol: 1e-3,
      norm: "elementwise",
      toleranceFrom: "dtype",
    });
    const tight = await run(copyBench([6 / 1024], [5 / 1024], { rtol: 1e-2, atol: 1e-5 }));
    expect(tight.passed).toBe(false); // bound 1e-5 + 1e-2 x 0.0048828125 = 5.9e-5
    const output = tight.results.verification?.outputs[0];
    expect(output).toMatchObject({
      rtol: 1e-2,
      atol: 1e-5,
      norm: "elementwise",
      toleranceFrom: "check",
      referenceMaxAbs: 5 / 1024,
      mismatches: 1,
    });
    // The JSON stays valid against the results schema.
    expect(RunResultsSchema.safeParse(tight.results).success).toBe(true);
  });

  it("relative-to-max passes a small element whose error is small beside the largest", async () => {
    // max|b| = 4; rtol 1/32 gives 0.125 everywhere; the 0.125 element is off by 0.0625.
    const bench = copyBench([4, 0.1875], [4, 0.125], { rtol: 1 / 32, atol: 0, norm: "relative-to-max" });
    const result = await run(bench);
    expect(result.passed).toBe(true);
    expect(result.results.verification?.outputs[0]).toMatchObject({
      norm: "relative-to-max",
      referenceMaxAbs: 4,
    });
  });

  it.each([
    [{ rtol: -1 }, "tolerance.rtol: must be a finite number >= 0, got -1"],
    [{ atol: Number.NaN }, "tolerance.atol: must be a finite number >= 0, got NaN"],
    [{ norm: "max" }, 'tolerance.norm: must be "elementwise" or "relative-to-max", got "max"'],
    [{ rtl: 0.1 }, 'tolerance: unknown key "rtl" (its keys: rtol, atol, norm)'],
    [0.01, "tolerance: must be an object { rtol?, atol?, norm? }, got 0.01"],
  ])("%o is a located error, even without --verify", async (tolerance, what) => {
    const error = await failure(run(copyBench([1], [1], tolerance), false));
    expect(error.code).toBe("RUNTIME_INVALID");
    expect(error.message).toContain(`benches/tolerance.ts: bench "tolerance", check "y": ${what}.`);
    expect(error.context.file).toBe("benches/tolerance.ts");
  });
});
