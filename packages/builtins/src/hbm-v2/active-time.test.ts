// Active standby: the time a pseudo-channel has a bank open (DRAMPower's rank active time), which
// draws IDD3N instead of IDD2N.
import { describe, expect, it } from "vitest";
import { hbm3Harness, hbmModel, requestAt } from "./test-support.js";

describe("hbm_ctrl_v2 counts the time a pseudo-channel has a row open (active_ns)", () => {
  it("closed page: one 32 B read is active from its ACT to its auto-precharge", () => {
    const h = hbm3Harness({ page_policy: "closed" });
    requestAt(h, 0, "read", 0, 32);
    h.machine.run();
    // ACT at 0.625 ns; the earliest PRE is ACT + tRAS 28.125 + (1.5 - 0.5) x 0.625 = 29.375 (after
    // the read's RD + tRTP): active 28.75 ns.
    expect(hbmModel(h).stats(0).activeNs).toBeCloseTo(28.75, 9);
    expect(hbmModel(h).stats(1).activeNs).toBe(0);
  });

  it("open page: active from the ACT to the conflict's PRE, then from the next ACT to the end", () => {
    const h = hbm3Harness();
    requestAt(h, 0, "read", 0, 32);
    requestAt(h, 100, "write", 1 << 20, 32);
    h.machine.run();
    if (h.machine.env.now < 300) h.machine.env.run(300);
    // ACT 0.625 .. PRE 100.625 (100 ns), ACT 116.25 .. 300 (183.75 ns).
    expect(hbmModel(h).stats(0).activeNs).toBeCloseTo(283.75, 9);
  });

  it("all-bank refresh: each REFab is tRFC of active time", () => {
    const h = hbm3Harness({ refresh: "all_bank" });
    requestAt(h, 10_000, "read", 0, 32); // ch0 PC0 wakes: the REFabs at 3.9 and 7.8 us, 350 ns each
    h.machine.run();
    const pc0 = hbmModel(h).stats(0);
    expect(pc0.refreshes).toBe(2);
    // Two REFabs, then the read's row open from its ACT (10 000.625: front end 1 CK) to the end.
    expect(pc0.activeNs).toBeCloseTo(700 + (h.machine.env.now - 10_000.625), 9);
  });
});
