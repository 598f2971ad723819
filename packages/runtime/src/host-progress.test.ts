import { isKbError } from "@kb/errors";
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { defineBench } from "./bench.js";
import { PlanEstimate, type RunProgress, runBenchCore, Simulator } from "./index.js";

describe("sim.progress", () => {
  it("passes each position to the listener and keeps the last; the simulation does not change", async () => {
    const sim = await Simulator.fromTopology({ name: "plan" });
    const seen: unknown[] = [];
    sim.plan.listener = (plan) => seen.push(plan);
    const before = { now: sim.now, events: sim.machine.env.processedEventCount };
    sim.progress(0, 3, "size 1 KiB");
    sim.progress(1, 3);
    expect(seen).toEqual([
      { done: 0, total: 3, label: "size 1 KiB" },
      { done: 1, total: 3, label: null },
    ]);
    expect(sim.plan.latest).toEqual({ done: 1, total: 3, label: null });
    expect({ now: sim.now, events: sim.machine.env.processedEventCount }).toEqual(before);
  });

  it("a position outside 0..total or a total not above 0 is RUNTIME_INVALID naming the call", async () => {
    const sim = await Simulator.fromTopology({ name: "plan" });
    for (const [done, total] of [
      [4, 3],
      [-1, 3],
      [0, 0],
      [Number.NaN, 3],
      [1, Number.POSITIVE_INFINITY],
    ] as const) {
      let error: unknown = null;
      try {
        sim.progress(done, total, "x");
      } catch (thrown) {
        error = thrown;
      }
      expect(isKbError(error) && error.code).toBe("RUNTIME_INVALID");
      expect(String((error as Error).message)).toMatch(
        new RegExp(
          `host-progress\\.test\\.ts:\\d+:\\d+: sim\\.progress\\(${String(done).replace("-", "\\-")}, ${String(total)}, "x"\\) is not a position in a plan`,
        ),
      );
    }
  });

  it("reaches runBenchCore's phase 1 progress events, with the plan on later events", async () => {
    const bench = defineBench({
      name: "plan",
      params: z.object({}),
      async run(sim) {
        sim.progress(0, 2, "first");
        sim.progress(1, 2, "second");
        return {};
      },
    });
    const events: RunProgress[] = [];
    await runBenchCore({
      bench,
      topology: "name: plan\n",
      benchSource: "// the bench",
      packages: {},
      onProgress: (event) => events.push(event),
    });
    const plans = events.flatMap((event) => (event.stage === "phase1" ? [event.plan] : []));
    expect(plans).toEqual([
      null,
      { done: 0, total: 2, label: "first" },
      { done: 1, total: 2, label: "second" },
    ]);
  });
});

describe("PlanEstimate", () => {
  it("estimates the wall time left at the rate of the steps done since the plan was first seen", () => {
    const estimate = new PlanEstimate();
    expect(estimate.etaMs({ done: 0, total: 11 }, 1000)).toBeNull();
    expect(estimate.etaMs({ done: 0, total: 11 }, 2000)).toBeNull(); // no step yet
    // 2 steps in 4 s: 2 s a step, 9 steps left.
    expect(estimate.etaMs({ done: 2, total: 11 }, 5000)).toBe(18_000);
  });

  it("starts over when the plan's total changes or its position goes back", () => {
    const estimate = new PlanEstimate();
    estimate.etaMs({ done: 0, total: 4 }, 0);
    expect(estimate.etaMs({ done: 1, total: 4 }, 1000)).toBe(3000);
    expect(estimate.etaMs({ done: 0, total: 8 }, 1000)).toBeNull();
    expect(estimate.etaMs({ done: 1, total: 8 }, 1500)).toBe(3500);
    expect(estimate.etaMs({ done: 0, total: 8 }, 2000)).toBeNull();
  });
});
