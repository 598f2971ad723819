import { tmpdir } from "node:os";
import { describe, expect, it } from "vitest";
import { designPoints, designSize, gridPoints } from "./designs.js";
import type { JobOutcome, SweepJob } from "./executor.js";
import { SWEEP_LIMITS } from "./limits.js";
import { LocalProcessPool } from "./node/process-pool.js";
import { parseSweepSpec } from "./spec.js";
import { specProblem } from "./test-support.js";

// Records are true and work is bounded: a time limit Node cannot wait for, or a design too large
// to plan, is refused when the spec is parsed, at its line, with the allowed range.

const BASE = "name: x\nbench: b\naxes:\n  n: { path: params.n, values: [1, 2] }\n";

describe("fault: time and size limits of a sweep spec", () => {
  it("refuses a run.timeoutS that overflows setTimeout (every point 'timed out' after 1 ms)", () => {
    expect(specProblem(`${BASE}run: { timeoutS: 2500000 }\n`)).toContain(
      "s.yaml:5:18: run.timeoutS: expected a number in (0, 2147483] s (about 24.8 days, the longest timer Node can set), got 2500000",
    );
    expect(parseSweepSpec(`${BASE}run: { timeoutS: 2147483 }\n`, "s.yaml").run.timeoutS).toBe(2147483);
  });

  it("bounds the other limits of run: and of the design, naming the field and the range", () => {
    expect(specProblem(`${BASE}run: { memoryMb: 1e12 }\n`)).toContain(
      "run.memoryMb: expected a whole number in [64, 1048576] MB, got 1000000000000",
    );
    expect(specProblem(`${BASE}run: { maxEvents: 1e300 }\n`)).toContain(
      "run.maxEvents: expected a whole number in [1, 9007199254740991], got 1e+300",
    );
    expect(specProblem(`${BASE}run: { maxSimTimeNs: 0 }\n`)).toContain(
      "run.maxSimTimeNs: expected a number in (0, 9007199254740991] ns, got 0",
    );
    expect(specProblem(`${BASE}design: { kind: lhs, points: 10, seed: 4294967296 }\n`)).toContain(
      "design.seed: expected a whole number in [0, 4294967295] (a 32-bit seed), got 4294967296",
    );
    expect(
      specProblem(
        "name: x\nbench: b\naxes:\n  n: { path: params.n, range: { min: -1e308, max: 1e308 } }\ndesign: { kind: random, points: 2 }\n",
      ),
    ).toContain("max - min must be a finite number");
  });

  it("refuses 1e9 random points before drawing one", () => {
    expect(specProblem(`${BASE}design: { kind: random, points: 1e9 }\n`)).toContain(
      "s.yaml:5:33: design.points: expected a whole number in [1, 100000] (each point is planned in memory and run as a process), got 1000000000",
    );
  });

  it("counts a 10^15-point grid without making it, and says how to narrow it", () => {
    const axes = ["a", "b", "c", "d", "e"]
      .map((name) => `  ${name}: { path: params.${name}, range: { min: 1, max: 1000, step: 1 } }`)
      .join("\n");
    const text = `name: x\nbench: b\naxes:\n${axes}\n`;
    expect(specProblem(text)).toBe(
      "[SWEEP_INVALID] s.yaml:4:3: design: the grid has 1,000,000,000,000,000 points (a 1,000 x b 1,000 x c 1,000 x d 1,000 x e 1,000), more than the 100,000 a sweep plans and runs; give the axes fewer values (a larger range.step), or sample the space with design: { kind: lhs, points: N }.",
    );
    const spec = parseSweepSpec(`${text}design: { kind: lhs, points: 50 }\n`, "s.yaml");
    expect(designSize(spec.axes, { kind: "grid" })).toBe(1e15);
    expect(() => gridPoints(spec.axes)).toThrow(/the grid has 1,000,000,000,000,000 points/);
    expect(designPoints(spec.axes, spec.design)).toHaveLength(50);
  });

  it("keeps the limit above designs people run (a 100 x 1000 grid plans)", () => {
    const spec = parseSweepSpec(
      "name: x\nbench: b\naxes:\n  a: { path: params.a, range: { min: 1, max: 100, step: 1 } }\n  b: { path: params.b, range: { min: 1, max: 1000, step: 1 } }\n",
      "s.yaml",
    );
    expect(designSize(spec.axes, spec.design)).toBe(SWEEP_LIMITS.maxDesignPoints);
  });
});

describe("fault: a point's wall-time limit", () => {
  it("never reaches setTimeout above 2^31 - 1 ms: such a job fails saying why, it does not time out at once", async () => {
    const pool = new LocalProcessPool({
      jobs: 1,
      command: () => ({ args: ["-e", "process.stdout.write('{}')"], cwd: tmpdir() }),
    });
    const outcome = new Promise<JobOutcome>((resolve) =>
      pool.onEvent((event) => {
        if (event.type === "finished") resolve(event.outcome);
      }),
    );
    const job = { point: 0, key: "k", bench: "b", benchDigest: "d", inputs: {} };
    pool.submit({
      ...job,
      run: { verify: false, memoryMb: 256, timeoutS: 2_500_000 },
    } as unknown as SweepJob);
    expect(await outcome).toEqual({
      status: "failed",
      reason: "run.timeoutS 2500000 is out of range: expected a number in (0, 2147483] s",
    });
    await pool.close();
  });
});

describe("fault: names that escape their place", () => {
  it("refuses a spec named . or .. (its results folder would be the spec's own folder or above)", () => {
    expect(specProblem("name: ..\nbench: b\naxes:\n  n: { path: params.n, values: [1] }\n")).toContain(
      "s.yaml:1:7: name: not . or .. (it names the results folder, results/NAME beside the spec).",
    );
  });

  it('refuses a param name with = (kb run --param a=b=1 sets a to "b=1")', () => {
    expect(
      specProblem("name: x\nbench: b\nparams: { a=b: 1 }\naxes:\n  n: { path: params.n, values: [1] }\n"),
    ).toContain("s.yaml:3:11: params.a=b: a param's name has no = (kb run --param NAME=VALUE).");
  });
});
