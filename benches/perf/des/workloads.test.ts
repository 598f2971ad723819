import { describe, expect, it } from "vitest";
import { expectedResults, fanout, pipeline, workloads } from "./workloads.js";

// The spec's end times and checksums prove that the engine orders events exactly like SimPy:
// any difference in tie-breaking or store hand-over changes the arrival times at the sinks.
describe("des speed-suite workloads give the spec's end times and checksums", () => {
  for (const expected of expectedResults) {
    const workload = workloads.find((candidate) => candidate.name === expected.bench)!;
    const label = Object.entries(expected.params)
      .map(([key, value]) => `${key}=${value}`)
      .join(",");
    it(`${expected.bench} ${label}`, () => {
      const result = workload.run(expected.params);
      expect(result.simEnd).toBe(expected.simEnd);
      expect(result.checksum).toBe(expected.checksum);
      // The largest workloads take seconds of wall time on a loaded 2-core machine.
    }, 60_000);
  }

  it("counts tokens as units and is deterministic", () => {
    const first = fanout.run({ NPE: 8, S: 4, C: 2, TPE: 10 });
    const second = fanout.run({ NPE: 8, S: 4, C: 2, TPE: 10 });
    expect(first).toEqual(second);
    expect(first.units).toBe(80);
  });

  it("a one-token pipeline ends after the sum of the stage latencies", () => {
    // Latencies 2+1+4+3+2+1 = 13 ns; every hand-over through a store takes no simulated time.
    expect(pipeline.run({ S: 6, C: 2, T: 1 }).simEnd).toBe(13);
  });
});
