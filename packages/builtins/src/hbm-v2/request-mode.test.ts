// closed_form request (issue 37 point 3, eighth pass): each request scheduled whole at its
// arrival, in closed form, and answered at once. Times computed by hand from the hbm3 preset
// (tCK 0.625 ns): tRCD_RD 19.375, tCL 12.5, tBL 1.25, tCCD_S 1.25, tCCD_L 2.5, tRP 16.25, tRAS
// 28.125, tRC 45, tRTP 5.625, tRRD_S 2.5, front end 0.625; ACT 0.9375, PRE 0.3125, RD 0.625 long
// (a constraint counts from a command's last cycle: ACT->RD 19.375 + 0.9375 - 0.625 = 19.6875,
// ACT->PRE 28.125 + 0.9375 - 0.3125 = 28.75, RD->PRE 5.625 + 0.625 - 0.3125 = 5.9375, PRE->ACT
// 16.25 + 0.3125 - 0.9375 = 15.625). Mapping RoBaBgSiPcCo4ChCo1: offsets 0, 1024, 2048 are
// channel 0, PC 0, SID 0, bank group 0, bank 0, row 0 (a 64 B line is two bursts of that bank,
// tCCD_L apart); 1 << 20 is row 1 of the same bank; 1 << 16 is bank group 1. Refresh off.
import { describe, expect, it } from "vitest";
import { doneTimes, hbm3Harness, hbmModel, requestAt } from "./test-support.js";

describe("hbm_ctrl_v2 closed_form request", () => {
  it("one bank: miss, hit, hit, conflict; another bank group's burst takes a gap between them", () => {
    const h = hbm3Harness({ closed_form: "request" });
    // R1 (t 0): closed bank. ACT at 0 + 0.625 (front end); RDs at 0.625 + 19.6875 = 20.3125 and
    // tCCD_L later, 22.8125; done 22.8125 + tCL + tBL = 36.5625.
    const r1 = requestAt(h, 0, "read", 0, 64);
    // R2 (t 0): a hit. Its RDs wait tCCD_L after R1's (same bank group): 25.3125, 27.8125; done 41.5625.
    const r2 = requestAt(h, 0, "read", 1024, 32 * 2);
    // R5 (t 0): bank group 1. ACT tRRD_S after R1's: 0.625 + 2.5 = 3.125; RD ready at 3.125 +
    // 19.6875 = 22.8125, tCCD_S (1.25) after R1's RD at 22.8125 -> 24.0625, which R2's RD at
    // 25.3125 allows (1.25 later): done 24.0625 + 13.75 = 37.8125.
    const r5 = requestAt(h, 0, "read", 1 << 16, 32);
    // R3 (t 10): a hit, after R2's RDs: 30.3125, 32.8125; done 46.5625.
    const r3 = requestAt(h, 10, "read", 2048, 64);
    // R4 (t 10): row 1, a conflict. PRE at max(ACT + 28.75 = 29.375, last RD 32.8125 + 5.9375) =
    // 38.75; ACT at max(PRE + 15.625, first ACT + tRC 45 = 45.625) = 54.375; RDs at 54.375 +
    // 19.6875 = 74.0625 and 76.5625; done 76.5625 + 13.75 = 90.3125.
    const r4 = requestAt(h, 10, "read", 1 << 20, 64);
    expect(doneTimes(h, r1, r2, r5, r3, r4)).toEqual([36.5625, 41.5625, 37.8125, 46.5625, 90.3125]);
    const stats = hbmModel(h).stats(0);
    // Runs: R1 a miss, R2 and R3 hits, R4 a conflict (R5 on its own bank: a miss).
    expect([stats.readHits, stats.readMisses, stats.readConflicts]).toEqual([2, 2, 1]);
    expect([stats.activates, stats.precharges, stats.readBursts]).toEqual([3, 1, 9]);
  });

  it("answers at once: no timer events, the done times fixed at arrival", () => {
    const h = hbm3Harness({ closed_form: "request" });
    const r1 = requestAt(h, 0, "read", 0, 64);
    // The harness's own events aside, the model schedules nothing: the answer is known now.
    expect(h.machine.env.now).toBe(0);
    expect(doneTimes(h, r1)).toEqual([36.5625]);
  });

  it("room counts the bursts whose column command is still ahead (channel queues shared)", () => {
    const h = hbm3Harness({ closed_form: "request", queue_scope: "channel", read_queue: 8 });
    const model = hbmModel(h);
    // The first question starts the count (bench:hbm's driver asks before its first request).
    expect(model.room(0, "read")).toBe(8);
    requestAt(h, 0, "read", 0, 64); // two bursts on port 0 (channel 0, PC 0), RDs at 20.3125, 22.8125
    requestAt(h, 0, "read", 1 << 14, 64); // bit 14: PC 1 of channel 0 (port 1), two bursts
    h.machine.env.run(1);
    expect(model.room(0, "read")).toBe(8 - 4);
    expect(model.room(1, "read")).toBe(8 - 4);
    h.machine.env.run(21);
    // Port 0's first RD (20.3125) and port 1's have issued.
    expect(model.room(0, "read")).toBe(8 - 2);
    h.machine.run();
    expect(model.room(0, "read")).toBe(8);
  });
});
