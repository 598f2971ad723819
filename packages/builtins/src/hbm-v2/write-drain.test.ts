// hbm_ctrl_v2's write-drain time (issue 37 point 5): the `write_drain_ns` counter.
import { describe, expect, it } from "vitest";
import { doneTimes, hbm3Harness, hbmModel, requestAt } from "./test-support.js";

describe("hbm_ctrl_v2 write_drain_ns", () => {
  it("writes alone: the drain runs from the ACT to the last WR (closed bank, 4 bursts in one row, tCCD_L apart)", () => {
    const h = hbm3Harness();
    // Two 64 B writes to pseudo-channel 0, one bank and row (RoBaBgSiPcCo4ChCo1: columns 0-1 and 2-3).
    const writes = [requestAt(h, 0, "write", 0, 64), requestAt(h, 0, "write", 1024, 64)];
    doneTimes(h, ...writes);
    const t = hbmModel(h).config.timing;
    // HBM3 (tCK 0.625 ns): the first WR at ACT + tRCD_WR + 1.5 CK - 1 CK (counted from the ACT's
    // last CK to the WR's), 9.375 + 0.3125 = 9.6875 ns; 3 more WRs each tCCD_L = 2.5 ns later:
    // 9.6875 + 7.5 = 17.1875 ns from the ACT (at 0.625 ns, the front end) to the last WR.
    const drain = 17.1875;
    expect(t.tRCD_WR + t.actCmd - t.colCmd + 3 * Math.max(t.tCCD_L, t.tBL)).toBeCloseTo(drain, 9);
    const stats = hbmModel(h).stats(0);
    expect(stats.writeBursts).toBe(4);
    expect(stats.writeDrainNs).toBeCloseTo(drain, 9);
    const counter = hbmModel(h)
      .stats()
      .find((stat) => stat.name === "write_drain_ns");
    expect(counter).toMatchObject({ unit: "ns" });
    expect(counter?.total).toBeCloseTo(drain, 9);
    // The other ports never drained.
    expect(counter?.perPort?.slice(1).every((value) => value === 0)).toBe(true);
  });

  it("reads alone never drain; a read after writes ends the drain at its first command", () => {
    const reads = hbm3Harness();
    doneTimes(reads, requestAt(reads, 0, "read", 0, 64));
    expect(hbmModel(reads).stats(0).writeDrainNs).toBe(0);

    const h = hbm3Harness();
    const write = requestAt(h, 0, "write", 0, 64);
    // Long after the drain's last WR: the drain lasts until the read's first command (a row hit,
    // issued at its front end).
    const read = requestAt(h, 1000, "read", 0, 32);
    doneTimes(h, write, read);
    // From the write's ACT at 0.625 ns (1 CK of front end) to the read's RD at 1000.625 ns.
    expect(hbmModel(h).stats(0).writeDrainNs).toBeCloseTo(1000, 6);
  });
});
