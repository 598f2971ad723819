// hbm_ctrl_v2's act_edge: rising leaves the falling edges to PREs (issue 37 point 2, sixth pass).
// Ramulator 2.1's HBM34Controller filters the row slot by edge: on a falling edge only a PRE may
// issue, so a PRE ready there goes even when an older request's ACT is ready at the same time
// (the ACT takes the next rising edge). Until this pass an ACT due on a falling edge moved every
// row candidate of its PC to the next rising edge. hbm3 preset, command_bus channel, refresh off,
// open page; the numbers of act-edge.test.ts: front end 0.625, a miss's RD 19.6875 after its ACT,
// data ends RD + 13.75; PRE to ACT of a bank tRP 16.25 + 0.3125 - 0.9375 = 15.625.
import { describe, expect, it } from "vitest";
import { doneTimes, hbm3Harness, requestAt } from "./test-support.js";

const ROW1 = 1 << 20; // row [33:20]: bank 0 of bank group 0, another row
const BG1 = 1 << 16; // bank group [17:16]: bank 0 of bank group 1 (closed)

describe("hbm_ctrl_v2 act_edge rising and PREs", () => {
  it("a PRE due on a falling edge issues there, before an older request's ACT due at the same time", () => {
    // Read 0 at 0 opens row 0 of BG0 bank 0 (ACT 0.625). At 40.3125 X (BG1, closed bank: wants an
    // ACT) and then Y (row 1 of BG0 bank 0: wants a PRE) arrive; both are due at 40.9375, slot 131,
    // a falling edge. Y's PRE goes there, X's ACT at the rising edge 41.25 (slots 132-134): X's RD
    // 41.25 + 19.6875 = 60.9375, ends 74.6875. Y's ACT is due 40.9375 + 15.625 = 56.5625 (slot
    // 181, falling) and takes 56.875: RD 76.5625, ends 90.3125. (Before this pass the PRE waited
    // with the ACT for 41.25 and then for the ACT's three slots, 42.1875: Y ended 91.5625.)
    const h = hbm3Harness({ command_bus: "channel", act_edge: "rising" });
    const first = requestAt(h, 0, "read", 0);
    const x = requestAt(h, 40.3125, "read", BG1);
    const y = requestAt(h, 40.3125, "read", ROW1);
    expect(doneTimes(h, first, x, y)).toEqual([
      expect.closeTo(34.0625, 9),
      expect.closeTo(74.6875, 9),
      expect.closeTo(90.3125, 9),
    ]);
  });

  it("any: the ACT (older) goes first at the falling edge, the PRE after its three slots", () => {
    // X's ACT at 40.9375 (slots 131-133), Y's PRE at 41.875, its ACT at 57.5 (any slot): Y's RD
    // 77.1875, ends 90.9375; X ends 40.9375 + 19.6875 + 13.75 = 74.375.
    const h = hbm3Harness({ command_bus: "channel" });
    const first = requestAt(h, 0, "read", 0);
    const x = requestAt(h, 40.3125, "read", BG1);
    const y = requestAt(h, 40.3125, "read", ROW1);
    expect(doneTimes(h, first, x, y)).toEqual([
      expect.closeTo(34.0625, 9),
      expect.closeTo(74.375, 9),
      expect.closeTo(90.9375, 9),
    ]);
  });
});
