// closed_form batch (issue 37 point 3, ninth pass): request's closed form, the requests held and
// ordered per batch (FR-FCFS, write drain). Times computed by hand from the hbm3 preset (tCK
// 0.625 ns): tRCD_RD 19.375, tRCD_WR 9.375, tCL 12.5, tCWL 6.25, tBL 1.25, tCCD_L 2.5, tRP
// 16.25, tRAS 28.125, tRC 45, tRTP 5.625, tRRD_S 2.5, tWTR_S 4.375, tRTW 12.5, front end 0.625;
// ACT 0.9375, PRE 0.3125, RD / WR 0.625 long (a constraint counts from a command's last cycle:
// ACT->RD 19.6875, ACT->WR 9.375 + 0.9375 - 0.625 = 9.6875, ACT->PRE 28.75, RD->PRE 5.9375,
// PRE->ACT 15.625). A batch is decided when the port's column frontier comes within
// decision_horizon_ns (4 CK = 2.5 ns) of the clock, and not before its first request's front end;
// a read is placed from its arrival + front end, a write from the batch that drains it. Mapping
// RoBaBgSiPcCo4ChCo1: offsets 0, 32, 1024, 1056, 2048 are pseudo-channel 0, bank group 0, bank 0,
// row 0; 1 << 20 is row 1 of that bank; 1 << 16 is bank group 1. Refresh off.
import { describe, expect, it } from "vitest";
import { doneTimes, hbm3Harness, hbmModel, requestAt } from "./test-support.js";

describe("hbm_ctrl_v2 closed_form batch", () => {
  it("FR-FCFS in a batch: a queued hit of the open row goes before an older conflict", () => {
    const h = hbm3Harness({ closed_form: "batch" });
    // R1 (t 0), alone in its batch (at 0.625): ACT at 0.625, RDs at 20.3125 and 22.8125 (the
    // column frontier); done 22.8125 + tCL + tBL = 36.5625.
    const r1 = requestAt(h, 0, "read", 0, 64);
    // R2 (t 1, row 1: a conflict) and R3 (t 1, row 0: a hit), one batch at 22.8125 - 2.5 =
    // 20.3125, both placed from 1.625. FR-FCFS: R3 first, its RD tCCD_L after R1's: 25.3125, done 39.0625. Then
    // R2: PRE at max(ACT + 28.75 = 29.375, R3's RD + 5.9375 = 31.25) = 31.25; ACT at max(PRE +
    // 15.625, ACT + tRC = 45.625) = 46.875; RD at 46.875 + 19.6875 = 66.5625, done 80.3125.
    const r2 = requestAt(h, 1, "read", 1 << 20, 32);
    const r3 = requestAt(h, 1, "read", 2048, 32);
    expect(doneTimes(h, r1, r2, r3)).toEqual([36.5625, 80.3125, 39.0625]);
    const stats = hbmModel(h).stats(0);
    expect([stats.readHits, stats.readMisses, stats.readConflicts]).toEqual([1, 1, 1]);
    // In arrival order (closed_form request) R3 would be a second conflict, after R2.
    const byArrival = hbm3Harness({ closed_form: "request" });
    const a = [
      requestAt(byArrival, 0, "read", 0, 64),
      requestAt(byArrival, 1, "read", 1 << 20, 32),
      requestAt(byArrival, 1, "read", 2048, 32),
    ];
    const [, , late] = doneTimes(byArrival, ...a);
    expect(late).toBeGreaterThan(80.3125);
  });

  it("write drain by batch: 5 writes above write_high drain to below write_low, a read, then the last write", () => {
    // Write queue of 8 bursts: drain above 0.5 x 8 = 4, down to below 0.25 x 8 = 2.
    const h = hbm3Harness({ closed_form: "batch", write_queue: 8, write_high: 0.5, write_low: 0.25 });
    // W1..W5 (32 B each, bank 0 row 0) and a read R (bank group 1), all at t 0: one batch at 0.625.
    const writes = [0, 32, 1024, 1056, 2048].map((offset) => requestAt(h, 0, "write", offset, 32));
    const read = requestAt(h, 0, "read", 1 << 16, 32);
    // 5 write bursts held > 4: write mode. W1: ACT 0.625, WR 0.625 + 9.6875 = 10.3125; W2-W4 row
    // hits tCCD_L apart: 12.8125, 15.3125, 17.8125 (done WR + tCWL + tBL = + 7.5). One write left
    // (< 2) and a read waits: read mode. R: ACT tRRD_S after W1's, 3.125; RD ready 22.8125 but
    // tCWL + tBL + tWTR_S = 11.875 after the last WR (17.8125): 29.6875, done 43.4375 (the column
    // frontier). W5 waits for the next batch (at 29.6875 - 2.5 = 27.1875), where no read waits:
    // write mode; its WR, from 27.1875, would be nearer R's RD (29.6875) than 11.875: after it by
    // tRTW, 42.1875, done 49.6875.
    expect(doneTimes(h, ...writes, read)).toEqual([17.8125, 20.3125, 22.8125, 25.3125, 49.6875, 43.4375]);
    const stats = hbmModel(h).stats(0);
    expect([stats.writeBursts, stats.readBursts, stats.activates]).toEqual([5, 1, 2]);
  });

  it("without write_high passed, reads go first and the writes wait until no read does", () => {
    const h = hbm3Harness({ closed_form: "batch" });
    // One write (bank 0) and one read (bank group 1) at t 0: 1 write burst is below write_high
    // (0.8 x 32): read mode, R alone: ACT 0.625, RD 20.3125, done 34.0625. The next batch at
    // 20.3125 - 2.5 = 17.8125: no read waits, write mode: W's ACT at 17.8125, WR ready 27.5, but
    // tRTW after R's RD: 32.8125, done 40.3125.
    const w = requestAt(h, 0, "write", 0, 32);
    const r = requestAt(h, 0, "read", 1 << 16, 32);
    expect(doneTimes(h, w, r)).toEqual([40.3125, 34.0625]);
  });

  it("room: held bursts count; a request that opens its bank leaves one burst's room at its ACT", () => {
    const h = hbm3Harness({ closed_form: "batch", read_queue: 8 });
    const model = hbmModel(h);
    expect(model.room(0, "read")).toBe(8);
    // A 64 B read at 0: two bursts of bank 0, held until its batch at 0.625.
    requestAt(h, 0, "read", 0, 64);
    h.machine.env.run(0.5);
    expect(model.room(0, "read")).toBe(6);
    // Decided at 0.625: ACT 0.625 (the activating burst leaves then), RDs at 20.3125, 22.8125.
    h.machine.env.run(1);
    expect(model.room(0, "read")).toBe(7);
    h.machine.env.run(21);
    expect(model.room(0, "read")).toBe(7);
    h.machine.env.run(23);
    expect(model.room(0, "read")).toBe(8);
  });
});
