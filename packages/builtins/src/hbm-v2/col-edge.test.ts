// hbm_ctrl_v2's col_edge param (issue 37 point 2, sixth pass): Ramulator 2.1's HBM34Controller
// ticks at half a CK and tries column commands (RD, WR) on rising CK edges only, the multiples of
// tCK = 0.625 ns on the hbm3 preset. Numbers as in act-edge.test.ts: front end 0.625; an idle
// miss's RD tRCD_RD 19.375 + the 1.5 CK ACT's adjustment 0.3125 = 19.6875 after its ACT; data ends
// RD + tCL 12.5 + tBL 1.25 = RD + 13.75.
import { describe, expect, it } from "vitest";
import { doneTimes, hbm3Harness, requestAt } from "./test-support.js";

const DATA = 12.5 + 1.25;

describe("hbm_ctrl_v2 col_edge", () => {
  it("rising: a miss's RD due half a CK after an edge waits for the next edge", () => {
    // Arrival 0, ACT 0.625 (a rising edge), RD due 0.625 + 19.6875 = 20.3125 (a falling edge).
    // any: RD 20.3125, ends 34.0625; rising: RD 20.625, ends 34.375.
    const end = (params: Record<string, unknown>) => {
      const h = hbm3Harness({ command_bus: "channel", act_edge: "rising", ...params });
      return doneTimes(h, requestAt(h, 0, "read", 0))[0];
    };
    expect(end({})).toBeCloseTo(20.3125 + DATA, 9);
    expect(end({ col_edge: "any" })).toBeCloseTo(34.0625, 9);
    expect(end({ col_edge: "rising" })).toBeCloseTo(20.625 + DATA, 9);
    expect(end({ col_edge: "rising" })).toBeCloseTo(34.375, 9);
  });

  it("rising: a row hit arriving on a falling edge issues its RD on the next rising one", () => {
    // The first read opens row 0 (open page, no refresh) and ends 34.375 as above. The second,
    // to the next 32 B of the row, arrives at 40.3125: RD due at 40.3125 + 0.625 = 40.9375 (a
    // falling edge); any: ends 40.9375 + 13.75 = 54.6875; rising: RD 41.25, ends 55.
    const ends = (params: Record<string, unknown>) => {
      const h = hbm3Harness({ command_bus: "channel", act_edge: "rising", ...params });
      const first = requestAt(h, 0, "read", 0);
      const second = requestAt(h, 40.3125, "read", 32);
      return doneTimes(h, first, second);
    };
    expect(ends({})[1]).toBeCloseTo(40.9375 + DATA, 9);
    expect(ends({ col_edge: "rising" })).toEqual([expect.closeTo(34.375, 9), expect.closeTo(55, 9)]);
  });

  it("rising: a write's WR waits for the edge too (tRCD_WR 9.375 + 0.3125 from a rising-edge ACT)", () => {
    // A write at 0 to a closed bank: ACT 0.625, WR due 0.625 + 9.6875 = 10.3125; rising: 10.625.
    // A write is answered when its WR issues plus tCWL 6.25 + tBL 1.25.
    const end = (params: Record<string, unknown>) => {
      const h = hbm3Harness({ command_bus: "channel", act_edge: "rising", ...params });
      return doneTimes(h, requestAt(h, 0, "write", 0))[0] as number;
    };
    expect(end({ col_edge: "rising" }) - end({})).toBeCloseTo(0.3125, 9);
  });
});
