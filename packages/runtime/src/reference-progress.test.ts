import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { Tensor } from "@kb/tensor";
import { readmeExample } from "@kb/tooling/readme-example";
import { describe, expect, it } from "vitest";
import {
  type BenchCheck,
  type BenchOutcome,
  type ReferenceProgress,
  replay,
  Simulator,
  verifyOutcome,
  withReferenceProgress,
} from "./index.js";
import { failure, thrown } from "./test-support.js";

/** A clock the test moves by hand, ms. */
function manualClock() {
  const clock = { now: 1000, read: () => clock.now };
  return clock;
}

/** An outcome whose checks have these references (the actual tensors are never read here). */
async function outcomeOf(references: Record<string, BenchCheck["reference"]>): Promise<BenchOutcome> {
  const sim = await Simulator.fromTopology({ name: "progress" });
  const check: Record<string, BenchCheck> = {};
  for (const [name, reference] of Object.entries(references))
    check[name] = { actual: sim.empty([2, 2], "f32", { name }), reference };
  return { check };
}

const zeros = () => Tensor.zeros([2, 2], "f32");

describe("withReferenceProgress", () => {
  it("reports 0 at the start, what the reference reports (throttled), then done at 1", async () => {
    const clock = manualClock();
    const reports: ReferenceProgress[] = [];
    const outcome = await outcomeOf({
      C: (context) => {
        // 40 ms a step; 0.4 and 0.45 come after 0.5 and are ignored (progress never goes back).
        for (const fraction of [0.1, 0.2, 0.3, 0.5, 0.4, 0.45, 1]) {
          clock.now += 40;
          context?.progress(fraction);
        }
        clock.now += 10;
        return zeros();
      },
    });
    const watched = withReferenceProgress(outcome, (progress) => reports.push(progress), {
      clock: clock.read,
    });
    const result = watched?.check?.C?.reference();
    expect(result).toBeInstanceOf(Tensor); // a synchronous reference stays synchronous
    // At most one report each 100 ms: 0.3 at 120 ms, then 1 at 280 ms (0.45 at 240 ms would be
    // the next if it counted), and the last one when the reference returned.
    expect(reports.map(({ fraction, elapsedMs, done }) => [fraction, elapsedMs, done])).toEqual([
      [0, 0, false],
      [0.3, 120, false],
      [1, 280, false],
      [1, 290, true],
    ]);
    expect(reports[1]).toMatchObject({ check: "C", index: 0, count: 1 });
    expect(reports[1]?.etaMs).toBeCloseTo(280, 9); // 120 ms for 30%: 280 ms for the other 70%
    expect(reports[3]?.etaMs).toBe(0);
    expect(reports[0]?.etaMs).toBeNull();
  });

  it("calls back with nondecreasing fractions ending at 1 for every check, in order", async () => {
    const reports: ReferenceProgress[] = [];
    const outcome = await outcomeOf({
      first: (context) => {
        for (let row = 1; row <= 8; row++) context?.progress(row / 8);
        return zeros();
      },
      second: () => zeros(), // reports nothing: still a start and an end
    });
    const watched = withReferenceProgress(outcome, (progress) => reports.push(progress), { intervalMs: 0 });
    for (const check of Object.values(watched?.check ?? {})) await check.reference();
    const first = reports.filter((report) => report.check === "first").map((report) => report.fraction);
    expect(first).toEqual([0, 0.125, 0.25, 0.375, 0.5, 0.625, 0.75, 0.875, 1, 1]);
    expect(reports.filter((report) => report.check === "second")).toMatchObject([
      { index: 1, count: 2, fraction: 0, done: false },
      { index: 1, count: 2, fraction: 1, done: true },
    ]);
    expect(reports.filter((report) => report.done).map((report) => report.check)).toEqual([
      "first",
      "second",
    ]);
  });

  it("waits for an async reference and passes its progress on to an outer context", async () => {
    const reports: ReferenceProgress[] = [];
    const outer: number[] = [];
    const outcome = await outcomeOf({
      C: async (context) => {
        await Promise.resolve();
        context?.progress(0.5);
        return zeros();
      },
    });
    const watched = withReferenceProgress(outcome, (progress) => reports.push(progress), { intervalMs: 0 });
    const pending = watched?.check?.C?.reference({ progress: (fraction) => outer.push(fraction) });
    expect(reports.map((report) => report.done)).toEqual([false]); // not done before it resolves
    expect(await pending).toBeInstanceOf(Tensor);
    expect(reports.map((report) => [report.fraction, report.done])).toEqual([
      [0, false],
      [0.5, false],
      [1, true],
    ]);
    expect(outer).toEqual([0.5]);
  });

  it("keeps the outcome's report and actual tensors; an outcome without checks is returned as is", async () => {
    const outcome = await outcomeOf({ C: zeros });
    const withReport = { ...outcome, report: { title: "t", columns: ["a"], rows: [[1]] } };
    const watched = withReferenceProgress(withReport, () => {});
    expect(watched?.report).toBe(withReport.report);
    expect(watched?.check?.C?.actual).toBe(outcome.check?.C?.actual);
    expect(withReferenceProgress(undefined, () => {})).toBeUndefined();
    const empty = { report: withReport.report };
    expect(withReferenceProgress(empty, () => {})).toBe(empty);
  });

  it("a fraction outside [0, 1] is RUNTIME_INVALID naming the check", async () => {
    for (const bad of [Number.NaN, -0.1, 1.5]) {
      const outcome = await outcomeOf({
        C: (context) => {
          context?.progress(bad);
          return zeros();
        },
      });
      const watched = withReferenceProgress(outcome, () => {});
      const error = thrown(() => watched?.check?.C?.reference());
      expect(error.code).toBe("RUNTIME_INVALID");
      expect(error.message).toContain(`reference of check "C": progress(${bad}) is not a fraction`);
    }
    const outcome = await outcomeOf({
      C: async (context) => {
        context?.progress(2);
        return zeros();
      },
    });
    const watched = withReferenceProgress(outcome, () => {});
    expect((await failure(Promise.resolve(watched?.check?.C?.reference()))).code).toBe("RUNTIME_INVALID");
  });
});

describe("README example: progress of the references", () => {
  it("runs as written and prints each report", async () => {
    const printed: unknown[][] = [];
    const console = { log: (...values: unknown[]) => printed.push(values) };
    // README example start

    const sim = await Simulator.fromTopology({ name: "demo" });
    const out = sim.empty([4, 2], "f32", { name: "out" }); // zeros: what the kernel would write
    const outcome: BenchOutcome = {
      check: {
        out: {
          actual: out,
          // A reference that reports after each of its 4 rows.
          reference: (context) => {
            const values = new Float64Array(8);
            for (let row = 0; row < 4; row++) context?.progress((row + 1) / 4);
            return Tensor.fromArray(values, [4, 2], "f32");
          },
        },
      },
    };
    const watched = withReferenceProgress(
      outcome,
      (progress) => console.log(progress.check, progress.fraction, progress.done),
      { intervalMs: 0 }, // every report (default: at most one each 100 ms, plus the first and the last)
    );
    const { store } = replay(sim.hostWrites, []); // phase 2 (no kernel ran)
    const report = await verifyOutcome(watched, store);
    console.log(report.pass);
    // out 0 false, out 0.25 false, out 0.5 false, out 0.75 false, out 1 false, out 1 true, true

    // README example end
    expect(printed).toEqual([
      ["out", 0, false],
      ["out", 0.25, false],
      ["out", 0.5, false],
      ["out", 0.75, false],
      ["out", 1, false],
      ["out", 1, true],
      [true],
    ]);
  });

  it("is the code of the README's section", () => {
    // readmeExample compares the first ```ts block of a file: the section's block, in a file of its own.
    const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
    const section = readme.slice(readme.indexOf("## Progress of the references"));
    const dir = mkdtempSync(join(tmpdir(), "kb-runtime-readme-"));
    try {
      const file = join(dir, "README.md");
      writeFileSync(file, section);
      const { readme: code, test } = readmeExample(pathToFileURL(file), import.meta.url);
      expect(code.length).toBeGreaterThan(0);
      expect(test).toBe(code);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
