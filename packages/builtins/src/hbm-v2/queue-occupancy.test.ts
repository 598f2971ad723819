// The queue-occupancy counters of hbm_ctrl_v2 (issue 37 point 5): the mean and the most bursts
// waiting in each pseudo-channel's read and write queues. hbm3 preset, RoBaBgSiPcCo4ChCo1,
// refresh off; the times are those of constraints.test.ts: front end 0.625, an idle miss's ACT at
// 0.625, its RD 19.6875 later, tCCD_L 2.5 between the bursts of one bank.
import { describe, expect, it } from "vitest";
import { hbm3Harness, hbmModel, requestAt } from "./test-support.js";

const stat = (h: ReturnType<typeof hbm3Harness>, name: string) =>
  hbmModel(h)
    .stats()
    .find((s) => s.name === name);

describe("hbm_ctrl_v2 queue occupancy", () => {
  it("a 64 B read: 2 bursts queued at 0, one leaves at its ACT (0.625), the other at its RD (22.8125): mean over 40 ns 23.4375 / 40", () => {
    // As Ramulator: the activating 32 B request leaves the read buffer for the active buffer at
    // its ACT; the row hit leaves at its RD. Area: 2 x 0.625 + 1 x (22.8125 - 0.625) = 23.4375.
    const h = hbm3Harness();
    requestAt(h, 0, "read", 0, 64);
    h.machine.env.run(40);
    const pc0 = hbmModel(h).stats(0);
    expect(pc0.readQueueMean).toBeCloseTo(23.4375 / 40, 9);
    expect([pc0.readQueueMax, pc0.writeQueueMean, pc0.writeQueueMax]).toEqual([2, 0, 0]);
    expect(stat(h, "read_queue_max")?.perPort?.slice(0, 2)).toEqual([2, 0]);
    expect(stat(h, "read_queue_mean")?.unit).toBe("bursts");
  });

  it("writes count in the write queue: 3 lines (6 bursts) at 0, served at once (no read waits)", () => {
    // The first line's ACT at 0.625 frees one burst (6 -> 5); WRs from 0.625 + tRCD_WR 9.375 +
    // ACT length - WR length 0.3125 = 10.3125 every tCCD_L 2.5 (the first was freed at the ACT):
    // 4 at 12.8125, 3, 2, 1, 0 at 22.8125. Area 6 x 0.625 + 5 x 12.1875 + (4 + 3 + 2 + 1) x 2.5.
    const h = hbm3Harness();
    for (let i = 0; i < 3; i++) requestAt(h, 0, "write", i << 10, 64);
    h.machine.env.run(40);
    const pc0 = hbmModel(h).stats(0);
    expect(pc0.writeQueueMean).toBeCloseTo((3.75 + 60.9375 + 25) / 40, 9);
    expect([pc0.writeQueueMax, pc0.readQueueMax, pc0.readQueueMean]).toEqual([6, 0, 0]);
  });
});
