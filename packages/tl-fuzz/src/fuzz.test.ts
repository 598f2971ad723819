import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { evaluate } from "./evaluate.js";
import { fuzz } from "./fuzz.js";

// The differential tester in CI: a fixed seed, so a red run is reproducible with
// `pnpm fuzz:tl --seed 20261124 --runs 10000`; longer runs with other seeds are local.
describe("the tl differential tester", () => {
  it("10000 random kernels agree with the independent evaluator (seed 20261124)", async () => {
    const report = await fuzz({ runs: 10000, seed: 20261124 });
    if (report.failure !== null) {
      expect.fail(
        `${report.failure.failure.summary}\n\nshrunk repro (kb run FILE --verify):\n${report.failure.repro}`,
      );
    }
    expect(report.runs).toBe(10000);
    expect(report.ops).toBeGreaterThan(10000 * 10);
    expect(report.loadsCompared).toBeGreaterThan(10000);
    expect(report.commandLists).toBeGreaterThan(5000);
  }, 600_000);
});

describe("the tester can fail", () => {
  // An evaluator that is off by one in the first element of every output: every program with an
  // output must fail, be shrunk, and come back as a bench that kb run --verify fails.
  // Shrinking takes the steps' kinds toward 0: a load alone stores nothing (it passes), so the
  // smallest failing draw is a load and one op. Which op a seed ends on depends on the draws
  // (they change when STEP_KINDS grows): with 31 kinds seed 3 ends on kind 1, `full` + `add`,
  // whose two values are both stored (load, full, add, two stores: five steps).
  const offByOne = (program: Parameters<typeof evaluate>[0]) =>
    evaluate(program).map((tensor) => {
      const data = Float64Array.from(tensor.data);
      data[0] = (data[0] as number) + 1;
      return { ...tensor, data };
    });

  it("a wrong expectation is reported, shrunk to a minimal kernel, and printed as a runnable bench", async () => {
    const report = await fuzz({ runs: 50, seed: 3, evaluate: offByOne });
    const failure = report.failure;
    expect(failure).not.toBeNull();
    expect(failure?.failure.kind).toBe("mismatch");
    expect(failure?.failure.summary).toMatch(
      /^O0 \(\w+ \[\d+, \d+\]\): \d+ of \d+ elements differ beyond the \w+ tolerance; first at \[0, 0\]/,
    );
    // Shrunk: one row, one block, a load and one op with their stores.
    expect(failure?.program.rows).toBe(1);
    expect(failure?.program.steps.map((step) => step.kind)).toEqual([
      "load",
      "full",
      "binary",
      "store",
      "store",
    ]);
    expect(failure?.repro).toContain("export default defineBench({");
    expect(failure?.repro).toContain("async function fuzzKernel(tl,");
  }, 120_000);

  it("kb run --verify on the printed repro fails (exit 1) where the evaluator and phase 2 disagree", async () => {
    const report = await fuzz({ runs: 50, seed: 3, evaluate: offByOne });
    const bin = fileURLToPath(new URL("../../../apps/cli/dist/bin.js", import.meta.url));
    if (!existsSync(bin)) expect.fail(`${bin} is missing: build first (pnpm build), as pnpm test does.`);
    const dir = mkdtempSync(join(tmpdir(), "kb-fuzz-repro-"));
    try {
      const file = join(dir, "repro.mjs");
      writeFileSync(file, report.failure?.repro ?? "");
      const run = spawnSync(process.execPath, [bin, "run", file, "--verify"], { encoding: "utf8" });
      expect(run.status).toBe(1);
      expect(run.stdout).toContain("FAIL: 2 of 2 outputs do not match (O0, O1)");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
