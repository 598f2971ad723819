import { describe, expect, it } from "vitest";
import { splitTwoThreads, windowStats } from "./windows.js";

describe("splitTwoThreads", () => {
  it("keeps a SIP on one thread and balances the SIPs by events", () => {
    const names = ["none", "sip0", "sip0.cube0", "sip0.cube1", "sip1.cube0", "sip2.cube0"];
    // SIP totals: sip0 = 1 + 5 + 4 = 10, sip1 = 6, sip2 = 3 -> sip0 on 0, sip1 on 1, sip2 on 1.
    const threads = splitTwoThreads(names, [7, 1, 5, 4, 6, 3], "sip");
    expect([...threads]).toEqual([2, 0, 0, 0, 1, 1]);
  });

  it("splits cubes of one SIP when each partition stands alone", () => {
    const names = ["none", "sip0.cube0", "sip0.cube1", "sip0.cube2", "sip0.cube3"];
    // LPT over 8, 7, 5, 4: 8 -> 0, 7 -> 1, 5 -> 1 (7 < 8), 4 -> 0 (8 < 12).
    const threads = splitTwoThreads(names, [0, 8, 7, 5, 4], "cube");
    expect([...threads]).toEqual([2, 0, 1, 1, 0]);
  });
});

describe("windowStats", () => {
  it("counts windows, the busier thread per window and messages between threads", () => {
    const threads = Int8Array.from([2, 0, 1]);
    // L = 10: window 0 holds t = 0, 1, 9 (thread 0, 0, 1); window 1 none; window 2 holds t = 20,
    // 25 (thread 1, unclaimed); window 5 holds t = 50 (thread 0).
    const times = Float64Array.from([0, 1, 9, 20, 25, 50]);
    const parts = Uint8Array.from([1, 1, 2, 2, 0, 1]);
    const stats = windowStats(
      times,
      parts,
      Float64Array.from([3, 21]),
      Uint8Array.from([1, 2]),
      Uint8Array.from([2, 0]),
      threads,
      10,
    );
    expect(stats.threadEvents).toEqual([3, 2, 1]);
    expect(stats.windows).toBe(3);
    expect(stats.windowsBothBusy).toBe(1);
    // max(2, 1, 1.5) + max(0, 1, 1) + max(1, 0, 0.5) = 2 + 1 + 1.
    expect(stats.sumMax).toBe(4);
    expect(stats.cross).toBe(2);
    expect(stats.crossBetween).toBe(1);
  });
});
