import { describe, expect, it } from "vitest";
import type { SweepJob } from "../executor.js";
import { outcomeOf } from "./process-pool.js";

// What a point's exit means; here, which failures a signal from outside caused (`stopped`: a
// worker gives such a point back to the queue instead of recording it).

const job = {
  point: 0,
  key: "k",
  bench: "b",
  benchDigest: "d",
  inputs: {},
  run: { verify: false, memoryMb: 512 },
};
const exit = (code: number | null, signal: NodeJS.Signals | null, stdout = "") => ({
  code,
  signal,
  stdout,
  stderr: "",
  timedOut: false,
  spawnError: null,
  job: job as unknown as SweepJob,
});

describe("outcomeOf", () => {
  it("marks a point stopped by SIGINT, SIGTERM or SIGHUP, or kb run's exit 130 / 143 after one", () => {
    for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
      expect(outcomeOf(exit(null, signal))).toEqual({
        status: "failed",
        reason: `crashed: killed by ${signal}`,
        stopped: true,
      });
    }
    expect(outcomeOf(exit(130, null))).toEqual({ status: "failed", reason: "exit code 130", stopped: true });
    expect(outcomeOf(exit(143, null))).toEqual({ status: "failed", reason: "exit code 143", stopped: true });
  });

  it("leaves the point's own failures unmarked: a crash, an error exit, a run without results", () => {
    expect(outcomeOf(exit(null, "SIGSEGV"))).toEqual({
      status: "failed",
      reason: "crashed: killed by SIGSEGV",
    });
    expect(outcomeOf(exit(1, null))).toEqual({ status: "failed", reason: "exit code 1" });
    expect(outcomeOf(exit(0, null))).toEqual({ status: "failed", reason: "exited 0 without a results JSON" });
    expect(outcomeOf(exit(0, null, '{"simTimeNs":1}'))).toEqual({ status: "ok", results: { simTimeNs: 1 } });
  });
});
