// hbm_ctrl_v2's active_buffer param (issue 37 point 2): Ramulator 2.1's active buffer holds the
// one 32 B request whose ACT issued, not the rest of its 64 B line.
import { describe, expect, it } from "vitest";
import { doneTimes, hbm3Harness, requestAt } from "./test-support.js";

describe("hbm_ctrl_v2 active_buffer", () => {
  // One 64 B read (RoBaBgSiPcCo4ChCo1: columns 0 and 1 of one bank and row, tCCD_L apart) that
  // arrives 21 ns before the first all-bank refresh falls due (tREFI = 3900 ns), so the refresh
  // comes due between its two bursts. HBM3: tCK 0.625, ACT 1.5 CK, PRE/REF 0.5 CK, RD 1 CK; a
  // constraint counts from the first command's last cycle to the second's.
  const arrival = 3879;
  const act = arrival + 0.625; // front end 1 CK: 3879.625
  const rd1 = act + 19.375 + 0.9375 - 0.625; // tRCD_RD: 3899.3125

  it("run (default): the line's second burst keeps priority; the refresh waits for it", () => {
    const h = hbm3Harness({ refresh: "all_bank" });
    const [done] = doneTimes(h, requestAt(h, arrival, "read", 0, 64));
    const rd2 = rd1 + 2.5; // tCCD_L: 3901.8125
    expect(done).toBeCloseTo(rd2 + 12.5 + 1.25, 9); // + tCL + tBL: 3915.5625
  });

  it("burst (Ramulator): the second burst is an ordinary row hit; the refresh closes its row first", () => {
    const h = hbm3Harness({ refresh: "all_bank", active_buffer: "burst" });
    const [done] = doneTimes(h, requestAt(h, arrival, "read", 0, 64));
    // The refresh is due at 3900 (after RD1): nothing queued issues while it waits. PREab at
    // ACT + tRAS (28.125 + 1.5 - 0.5 CK) = 3908.375 (RD1 + tRTP is earlier); REFab at ACT + tRC
    // (45 + 1 CK) = 3925.25 (PREab + tRP is earlier); the bank opens again tRFC after the REF
    // (350 + 0.5 - 1.5 CK): ACT 4274.625, RD 4294.3125, data end + tCL + tBL.
    const preab = act + 28.125 + 0.9375 - 0.3125;
    expect(preab).toBeCloseTo(3908.375, 9);
    const ref = Math.max(act + 45 + 0.9375 - 0.3125, preab + 16.25);
    const act2 = ref + 350 + 0.3125 - 0.9375;
    const rd2 = act2 + 19.375 + 0.9375 - 0.625;
    expect(done).toBeCloseTo(rd2 + 12.5 + 1.25, 9); // 4308.0625
    expect(done).toBeCloseTo(4308.0625, 9);
  });
});
