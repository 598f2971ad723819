import { describe, expect, it } from "vitest";
import { fuzz } from "./fuzz.js";

// The differential tester in CI: a fixed seed, so a red run is reproducible with
// `pnpm fuzz:tl --seed 20261124 --runs 4000`; longer runs with other seeds are local.
describe("the tl differential tester", () => {
  it("4000 random kernels agree with the independent evaluator (seed 20261124)", async () => {
    const report = await fuzz({ runs: 4000, seed: 20261124 });
    if (report.failure !== null) {
      expect.fail(
        `${report.failure.failure.summary}\n\nshrunk repro (kb run FILE --verify):\n${report.failure.repro}`,
      );
    }
    expect(report.runs).toBe(4000);
    expect(report.ops).toBeGreaterThan(4000 * 10);
  }, 600_000);
});
