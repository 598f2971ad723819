// hbm_ctrl_v2's refresh_scope param (issue 37 point 2, seventh pass): Ramulator 2.1's channel
// controller keeps one priority buffer for both pseudo-channels' all-bank refreshes and serves its
// head only, so PC 1's PREab / REFab wait for PC 0's REFab. hbm3 preset (tCK 0.625; ACT 1.5 CK,
// PRE/REF 0.5 CK, RD 1 CK, a constraint counting from the first command's last cycle to the
// second's), queue_scope channel, all-bank refresh (tREFI 3900, tRFC 350), open page.
import { describe, expect, it } from "vitest";
import { doneTimes, hbm3Harness, requestAt } from "./test-support.js";

const PC1 = 1 << 14; // pseudo-channel [14]: PC 1 of channel 0, bank 0, row 0

describe("hbm_ctrl_v2 refresh_scope", () => {
  // A (PC 0) and B (PC 1) arrive at 3879 and open bank 0 of their PC: ACT 3879.625, RD
  // 3899.3125 (tRCD_RD 19.375 + 0.9375 - 0.625), data end RD + tCL + tBL = 3913.0625. The
  // refresh falls due at 3900. PC 0: PREab at ACT + tRAS (28.125 + 0.9375 - 0.3125) = 3908.375,
  // REFab at max(ACT + tRC (45 + 0.9375 - 0.3125), PREab + tRP 16.25) = 3925.25. C (PC 1) and D
  // (PC 0) arrive at 3950 for the bank the PREab closed: an ACT tRFC (350 + 0.3125 - 0.9375) after
  // their PC's REFab, RD 19.6875 later, data end 13.75 after that.
  const arrival = 3879;
  const refab0 = 3925.25;
  const refToEnd = 349.375 + 19.6875 + 13.75;

  it("pseudo_channel (default): both PCs refresh at once", () => {
    const h = hbm3Harness({ refresh: "all_bank", queue_scope: "channel" });
    const a = requestAt(h, arrival, "read", 0);
    const b = requestAt(h, arrival, "read", PC1);
    const c = requestAt(h, 3950, "read", PC1);
    const d = requestAt(h, 3950, "read", 0);
    // PC 1 as PC 0: REFab 3925.25, C's data 4308.0625.
    expect(doneTimes(h, a, b, c, d)).toEqual([
      expect.closeTo(3913.0625, 9),
      expect.closeTo(3913.0625, 9),
      expect.closeTo(refab0 + refToEnd, 9),
      expect.closeTo(4308.0625, 9),
    ]);
  });

  it("channel: PC 1's PREab waits for PC 0's REFab, its REFab tRP after that", () => {
    const h = hbm3Harness({ refresh: "all_bank", queue_scope: "channel", refresh_scope: "channel" });
    const a = requestAt(h, arrival, "read", 0);
    const b = requestAt(h, arrival, "read", PC1);
    const c = requestAt(h, 3950, "read", PC1);
    const d = requestAt(h, 3950, "read", 0);
    // PC 1: PREab one row slot (0.3125) after PC 0's REFab, 3925.5625; REFab tRP later,
    // 3941.8125 (its tRC bound, 3925.25, is past); C's ACT 4291.1875, data end 4324.625. PC 0
    // and the reads before the refresh are as with pseudo_channel.
    const refab1 = refab0 + 0.3125 + 16.25;
    expect(refab1).toBeCloseTo(3941.8125, 9);
    expect(doneTimes(h, a, b, c, d)).toEqual([
      expect.closeTo(3913.0625, 9),
      expect.closeTo(3913.0625, 9),
      expect.closeTo(refab1 + refToEnd, 9),
      expect.closeTo(4308.0625, 9),
    ]);
    expect(refab1 + refToEnd).toBeCloseTo(4324.625, 9);
  });

  it("channel, PC 0 busy when the refresh falls due: PC 1 waits for it even with nothing open", () => {
    // Only A (PC 0) opens a bank; PC 1 has every bank closed, so its REFab alone goes one row slot
    // after PC 0's REFab (3925.5625) instead of at 3900; C's data end 3925.5625 + 382.8125.
    const h = hbm3Harness({ refresh: "all_bank", queue_scope: "channel", refresh_scope: "channel" });
    const a = requestAt(h, arrival, "read", 0);
    const c = requestAt(h, 3950, "read", PC1);
    expect(doneTimes(h, a, c)).toEqual([
      expect.closeTo(3913.0625, 9),
      expect.closeTo(refab0 + 0.3125 + refToEnd, 9),
    ]);
    // pseudo_channel: PC 1's REFab at 3900, C's data end 4282.8125.
    const free = hbm3Harness({ refresh: "all_bank", queue_scope: "channel" });
    const a2 = requestAt(free, arrival, "read", 0);
    const c2 = requestAt(free, 3950, "read", PC1);
    expect(doneTimes(free, a2, c2)[1]).toBeCloseTo(3900 + refToEnd, 9);
  });
});
