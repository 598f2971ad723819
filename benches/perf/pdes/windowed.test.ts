import { describe, expect, it } from "vitest";
import type { Crossing, SyntheticParams } from "./synthetic.js";
import { runSequential, runWindowedInline, WindowedPartition } from "./windowed.js";

/** The naive way: crossings scheduled as timeouts at the window's start, behind local events. */
class LateArrivals extends WindowedPartition {
  override window(end: number, incoming: readonly Crossing[]): number {
    for (const crossing of incoming) {
      this.env.timeout(crossing.at - this.env.now).addCallback(() => this.part.arrive(crossing));
    }
    if (end > this.env.now) this.env.run(end);
    return this.env.peek();
  }
}

const base: SyntheticParams = {
  tokens: 24,
  stations: 3,
  stages: 6,
  hops: 5,
  linkNs: 50,
  maxWork: 7,
  burn: 0,
  seed: 11,
};

describe("the window-barrier engine on the synthetic workload", () => {
  it("gives the single-thread run's log, times and steps byte for byte", () => {
    for (const params of [
      base,
      { ...base, seed: 5, stations: 2, linkNs: 8 },
      { ...base, tokens: 3, hops: 9 },
    ]) {
      const sequential = runSequential(params);
      const { result, windows } = runWindowedInline(params);
      expect(JSON.stringify(result)).toBe(JSON.stringify(sequential));
      // Every token ran every stage of every hop, in both partitions.
      expect((sequential.steps[0] as number) + (sequential.steps[1] as number)).toBe(
        2 * params.tokens * params.stages * params.hops,
      );
      expect(windows).toBeGreaterThan(params.hops - 1);
    }
  });

  it("sees same-instant order: arrivals behind the instant's local events change the log", () => {
    const sequential = JSON.stringify(runSequential(base));
    const late = runWindowedInline(base, (index, params) => new LateArrivals(index, params));
    expect(JSON.stringify(late.result)).not.toBe(sequential);
    // Same steps and stations, only the order at some instants differs.
    expect(late.result.steps).toEqual(runSequential(base).steps);
  });

  it("refuses a stage time that is not below the link latency (the lookahead)", () => {
    expect(() => runSequential({ ...base, maxWork: 50 })).toThrow(/below the link latency/);
  });
});
