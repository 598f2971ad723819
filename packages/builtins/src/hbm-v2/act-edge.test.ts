// hbm_ctrl_v2's act_edge param (issue 37 point 2, fifth pass): Ramulator 2.1's HBM34Controller
// issues an ACT on a rising CK edge only (a PRE or REF may take a falling edge). hbm3 preset,
// command_bus channel: the row lane's slot is half a CK (0.3125 ns), so rising edges are the even
// slots (0, 0.625, 1.25, ...). Numbers as in channel.test.ts: front end 0.625; an idle miss's RD
// 19.6875 after its ACT (tRCD_RD with the 1.5 CK ACT's adjustment); data ends RD + tCL 12.5 + tBL
// 1.25. PC 1 is bit [14].
import { describe, expect, it } from "vitest";
import { doneTimes, hbm3Harness, requestAt } from "./test-support.js";

const PC1 = 1 << 14;
const MISS = 19.6875 + 12.5 + 1.25; // ACT to the end of the data: 33.4375

describe("hbm_ctrl_v2 act_edge", () => {
  it("rising: an ACT due on a falling edge waits half a CK for the next rising one", () => {
    // Arrival 0.3125: the ACT is due at 0.9375 (slot 3, a falling edge). any: ACT 0.9375, ends
    // 34.375; rising: ACT 1.25 (slot 4), ends 34.6875.
    const end = (params: Record<string, unknown>) => {
      const h = hbm3Harness({ command_bus: "channel", ...params });
      return doneTimes(h, requestAt(h, 0.3125, "read", 0))[0];
    };
    expect(end({})).toBeCloseTo(0.9375 + MISS, 9);
    expect(end({ act_edge: "any" })).toBeCloseTo(34.375, 9);
    expect(end({ act_edge: "rising" })).toBeCloseTo(1.25 + MISS, 9);
    expect(end({ act_edge: "rising" })).toBeCloseTo(34.6875, 9);
  });

  it("rising: the second of two ACTs on a channel's row lane goes at the first rising edge after the first's 1.5 CK", () => {
    // Idle misses on PC 0 and PC 1 at 0: PC 0's ACT at 0.625 holds slots 2, 3 and 4 (to 1.5625);
    // any: PC 1's ACT at 1.5625 (slot 5, falling), ends 35; rising: 1.875 (slot 6), ends 35.3125.
    const ends = (params: Record<string, unknown>) => {
      const h = hbm3Harness({ command_bus: "channel", ...params });
      return doneTimes(h, requestAt(h, 0, "read", 0), requestAt(h, 0, "read", PC1));
    };
    expect(ends({})).toEqual([expect.closeTo(0.625 + MISS, 9), expect.closeTo(1.5625 + MISS, 9)]);
    expect(ends({ act_edge: "rising" })).toEqual([
      expect.closeTo(0.625 + MISS, 9),
      expect.closeTo(1.875 + MISS, 9),
    ]);
    expect(ends({ act_edge: "rising" })[1]).toBeCloseTo(35.3125, 9);
  });

  it("has no effect without command_bus channel (no row lane)", () => {
    const h = hbm3Harness({ act_edge: "rising" });
    expect(doneTimes(h, requestAt(h, 0.3125, "read", 0))[0]).toBeCloseTo(0.9375 + MISS, 9);
  });
});
