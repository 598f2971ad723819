import { Tensor } from "@kb/tensor";
import type { TL } from "@kb/tl";
import { readmeExample } from "@kb/tooling/readme-example";
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { defineBench } from "./bench.js";
import type { DeviceTensor } from "./device-tensor.js";
import { runBenchCore } from "./run-bench-core.js";

// docs/verification.md's runnable example: a kernel that forgets y passes the f16 default on
// outputs near 0.006 and fails the tolerance the check states.

// README example start
/** out = x + y, 1024 elements per program; with `forgetY` the kernel stores x alone (a bug). */
async function addKernel(tl: TL, x: DeviceTensor, y: DeviceTensor, out: DeviceTensor, forgetY: boolean) {
  const start = tl.programId(0) * 1024;
  const xs = await tl.load(x.at(start), [1024], "f16");
  const ys = await tl.load(y.at(start), [1024], "f16");
  await tl.store(out.at(start), forgetY ? xs : await tl.add(xs, ys));
}

const smallSums = defineBench({
  name: "small-sums",
  params: z.object({ forgetY: z.boolean().default(false), own: z.boolean().default(true) }),
  async run(sim, p) {
    // x in [0.004, 0.008], y in [0, 0.0005]: f16 outputs near 0.006, far below 1.
    const x = sim.random([4096], "f16", { seed: 1, low: 0.004, high: 0.008 });
    const y = sim.random([4096], "f16", { seed: 2, low: 0, high: 0.0005 });
    const X = await sim.toDevice(x, { name: "x" });
    const Y = await sim.toDevice(y, { name: "y" });
    const out = sim.empty([4096], "f16", { name: "out" });
    await sim.launch(addKernel, { grid: { pes: 4 }, args: [X, Y, out, p.forgetY] });
    // Each sum exact in f64, rounded once to f16: not the kernel's roundings.
    const reference = () => {
      const sums = new Float64Array(4096);
      for (let i = 0; i < 4096; i++) sums[i] = x.getFlat(i) + y.getFlat(i);
      return Tensor.fromArray(sums, [4096], "f16");
    };
    // f16's u is 4.9e-4: rtol 2e-3 allows two ulps; atol 1e-6 is far below the values (~0.006).
    const tolerance = p.own ? { tolerance: { rtol: 2e-3, atol: 1e-6 } } : {};
    return { check: { out: { actual: out, reference, ...tolerance } } };
  },
});
export default smallSums;
// README example end

const run = (params: Record<string, string>) =>
  runBenchCore({
    bench: smallSums,
    topology: "name: tiny\n",
    benchSource: "",
    packages: {},
    params,
    verify: true,
  });

// Two runs of 4096 elements each; generous on a loaded machine.
describe("docs/verification.md's example", { timeout: 60_000 }, () => {
  it("is the code this test runs", () => {
    const { readme, test } = readmeExample(
      new URL("../../../docs/verification.md", import.meta.url),
      import.meta.url,
    );
    expect(test).toBe(readme);
  });

  it("passes the correct kernel with the stated tolerance", async () => {
    const result = await run({});
    expect(result.passed).toBe(true);
    expect(result.results.verification?.outputs[0]).toMatchObject({ maxAbsError: 0, toleranceFrom: "check" });
  });

  it("the f16 default misses the forgotten y; the stated tolerance catches it", async () => {
    const loose = await run({ forgetY: "true", own: "false" });
    expect(loose.passed).toBe(true);
    const error = loose.results.verification?.outputs[0]?.maxAbsError as number;
    // The error is y itself: below the default's atol 1e-3, well above 2e-3 x 0.008 + 1e-6.
    expect(error).toBeGreaterThan(4e-4);
    expect(error).toBeLessThanOrEqual(5e-4);
    const tight = await run({ forgetY: "true" });
    expect(tight.passed).toBe(false);
    // Only elements whose y is below the bound (~1.3e-5 of a uniform [0, 0.0005]: ~2.6%) pass.
    const mismatches = tight.results.verification?.outputs[0]?.mismatches as number;
    expect(mismatches).toBeGreaterThan(3900);
    expect(mismatches).toBeLessThan(4096);
  });
});
