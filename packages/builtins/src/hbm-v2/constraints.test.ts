// Hand-computed timing cases of hbm_ctrl_v2 (hbm3 preset): one test per JEDEC constraint the
// controller enforces. Every expected time below is worked out in its comment from the preset's
// ns values (presets.ts, pinned by the first test) and the controller's fixed rules, never copied
// from a run.
//
// The rules of the model that enter the arithmetic (scheduler.ts, controller.ts):
// - front end FE = 1 CK = 0.625 ns: a request is visible to the scheduler at arrival + FE;
// - commands have lengths on the command buses (Ramulator's HBM3 command_cycles): ACT 1.5 CK =
//   0.9375, PRE/REF 0.5 CK = 0.3125, RD/WR 1 CK = 0.625; a constraint from command p to command
//   f counts from p's last cycle to f's last cycle: nominal + len(p) - len(f). So
//     ACT->RD  = tRCD_RD + 0.9375 - 0.625  = 19.375 + 0.3125 = 19.6875
//     ACT->WR  = tRCD_WR + 0.9375 - 0.625  =  9.375 + 0.3125 =  9.6875
//     ACT->PRE = tRAS    + 0.9375 - 0.3125 = 28.125 + 0.625  = 28.75
//     PRE->ACT = tRP     + 0.3125 - 0.9375 = 16.25  - 0.625  = 15.625
//     RD->PRE  = tRTP    + 0.625  - 0.3125 =  5.625 + 0.3125 =  5.9375
//     REF->ACT = tRFC    + 0.3125 - 0.9375 = 350    - 0.625  = 349.375
//   (ACT->ACT tRC / tRRD / tFAW and RD/WR->RD/WR are between commands of one length: nominal);
// - WR->RD = tCWL + tBL + tWTR (tWTR counts from the end of the write data);
// - a read's data: first at RD + tCL, last burst's end at RD + tCL + tBL; a write is done at
//   WR + tCWL + tBL. Through the harness (no links) doneNs is that end.
//
// Addresses: mapping RoBaBgSiPcCo4ChCo1 with 32 B bursts (docs/latency-model.md §2.1): column
// bit 0 = A5, channel A[9:6], column bits 1-4 A[13:10], PC A14, SID A15, bank group A[17:16],
// bank A[19:18], row A20+. Every address below has channel 0 and PC 0: all on port 0.

import { MemoryHarness } from "@kb/probe";
import { describe, expect, it } from "vitest";
import { graphFrom } from "../../../components/src/test-support.js";
import { HBM_PRESETS } from "./presets.js";

const COL = (n: number) => n << 10; // column bits 1-4 (same bank and row)
const SID = (n: number) => n << 15;
const BG = (n: number) => n << 16;
const BANK = (n: number) => n << 18;
const ROW = (n: number) => n * 2 ** 20;

/** One HBM3 stack as the reference configuration; `params`: the controller's knobs (refresh off unless given). */
function harness(params: Record<string, unknown> = {}): MemoryHarness {
  return new MemoryHarness(
    graphFrom({
      cube: {
        hbm: {
          impl: "hbm_ctrl_v2",
          preset: "hbm3",
          channels: 16,
          pseudo_channels: 2,
          pc_bw_gbs: 25.6,
          sids: 2,
          bank_groups: 4,
          banks_per_group: 4,
          row_bytes: 1024,
          burst_bytes: 32,
          mapping: "RoBaBgSiPcCo4ChCo1",
          params: { refresh: "none", ...params },
        },
      },
    }),
  );
}

type Req = ReturnType<MemoryHarness["request"]>;

/** Advances to `t` ns and sends a 32 B request there. */
function at(h: MemoryHarness, t: number, kind: "read" | "write", offset: number, bytes = 32): Req {
  if (h.machine.env.now < t) h.machine.env.run(t);
  expect(h.machine.env.now).toBeCloseTo(t, 9);
  return h.request(kind, offset, bytes);
}

/** Runs to the end and returns every request's doneNs. */
function done(h: MemoryHarness, ...requests: Req[]): number[] {
  h.machine.run();
  return requests.map((r) => r.value.doneNs);
}

describe("hbm_ctrl_v2 timing constraints (hbm3, hand-computed)", () => {
  it("the hbm3 preset carries the JEDEC values these cases use, and the addresses land as assumed", () => {
    const t = HBM_PRESETS.hbm3.timing;
    const expected: Record<string, number> = {
      tCK: 0.625,
      tCL: 12.5, // 20 CK
      tCWL: 6.25, // 10 CK
      tRCD_RD: 19.375, // 31 CK
      tRCD_WR: 9.375, // 15 CK
      tRP: 16.25, // 26 CK
      tRAS: 28.125, // 45 CK
      tRC: 45, // 72 CK
      tRTP: 5.625, // 9 CK
      tCCD_S: 1.25, // 2 CK
      tCCD_L: 2.5, // 4 CK
      tCCD_R: 1.875, // 3 CK
      tRRD_S: 2.5, // 4 CK
      tRRD_L: 3.125, // 5 CK
      tFAW: 15, // 24 CK
      tWTR_S: 4.375, // 7 CK
      tWTR_L: 6.25, // 10 CK
      tRTW: 12.5, // 20 CK
      tBL: 1.25, // 2 CK
      tRFC: 350, // 560 CK
      tREFI: 3900, // 6240 CK
      actCmd: 0.9375, // 1.5 CK
      preCmd: 0.3125, // 0.5 CK
      colCmd: 0.625, // 1 CK
      frontend: 0.625, // 1 CK
    };
    for (const [key, value] of Object.entries(expected)) {
      expect((t as unknown as Record<string, number>)[key], key).toBeCloseTo(value, 9);
    }
    const map = harness().addressMap;
    const where = (offset: number) => {
      const c = map.locate(offset);
      return [c.channel, c.pseudoChannel, c.sid, c.bankGroup, c.bank, c.row];
    };
    expect(where(0)).toEqual([0, 0, 0, 0, 0, 0]);
    expect(where(32)).toEqual([0, 0, 0, 0, 0, 0]); // A5: column bit 0
    expect(where(COL(1))).toEqual([0, 0, 0, 0, 0, 0]);
    expect(where(SID(1))).toEqual([0, 0, 1, 0, 0, 0]);
    expect(where(BG(3))).toEqual([0, 0, 0, 3, 0, 0]);
    expect(where(BANK(2))).toEqual([0, 0, 0, 0, 2, 0]);
    expect(where(ROW(1))).toEqual([0, 0, 0, 0, 0, 1]);
    expect(map.locate(64).channel).toBe(1); // A6: the channel starts above column bit 0
    expect(map.locate(1 << 14).pseudoChannel).toBe(1);
    for (const offset of [0, COL(1), SID(1), BG(3), BANK(2), ROW(1)]) expect(map.lane(offset)).toBe(0);
  });

  it("1. idle row miss on a closed bank: FE + tRCD_RD (+ACT-RD length) + tCL + tBL", () => {
    const h = harness();
    const read = at(h, 0, "read", 0);
    // ACT at FE = 0.625; RD at 0.625 + 19.6875 = 20.3125; data ends 20.3125 + 12.5 + 1.25 = 34.0625
    // (= 0.625 + 19.375 + 0.3125 + 12.5 + 1.25).
    expect(done(h, read)[0]).toBeCloseTo(34.0625, 6);
    expect(read.value.arrivalNs).toBe(0);
  });

  it("2. row hit: FE + tCL + tBL on an open row; back to back, tCCD_L after the first RD", () => {
    const h = harness();
    const first = at(h, 0, "read", 0);
    // The bank stays open (open page). A read to the same row at 100: RD at 100 + FE = 100.625,
    // data ends 100.625 + 12.5 + 1.25 = 114.375 (latency 0.625 + 12.5 + 1.25 = 14.375).
    const hit = at(h, 100, "read", COL(1));
    expect(done(h, first, hit)).toEqual([expect.closeTo(34.0625, 6), expect.closeTo(114.375, 6)]);

    // Two reads to one row at once: one ACT at 0.625, RD1 at 20.3125 (as case 1); RD2 of the
    // same bank group tCCD_L later: 20.3125 + 2.5 = 22.8125, ends 22.8125 + 13.75 = 36.5625.
    const h2 = harness();
    const a = at(h2, 0, "read", 0);
    const b = at(h2, 0, "read", COL(1));
    expect(done(h2, a, b)).toEqual([expect.closeTo(34.0625, 6), expect.closeTo(36.5625, 6)]);
    // Same for the two bursts of one 64 B read (A5 is column bit 0: one bank and row): 36.5625.
    const h3 = harness();
    const line = at(h3, 0, "read", 0, 64);
    expect(done(h3, line)[0]).toBeCloseTo(36.5625, 6);
  });

  it("3. row conflict: PRE (after tRAS, tRTP) + tRP + tRCD_RD + tCL + tBL, and tRC between ACTs", () => {
    // Row 0 of bank 0 opened at 0.625 (case 1). At 100 (tRAS, tRC long past) a read to row 1 of
    // the same bank: PRE at 100.625; ACT at 100.625 + PRE->ACT 15.625 = 116.25; RD at
    // 116.25 + 19.6875 = 135.9375; ends 135.9375 + 13.75 = 149.6875
    // (latency 0.625 + 16.25 + 19.375 + 0.3125 - 0.625 + 12.5 + 1.25 = 49.6875).
    const h = harness();
    const open = at(h, 0, "read", 0);
    const conflict = at(h, 100, "read", ROW(1));
    expect(done(h, open, conflict)).toEqual([expect.closeTo(34.0625, 6), expect.closeTo(149.6875, 6)]);

    // Both at 0: ACT0 0.625, RD0 20.3125. PRE after tRAS: max(ACT0 + ACT->PRE = 0.625 + 28.75
    // = 29.375, RD0 + RD->PRE = 20.3125 + 5.9375 = 26.25) = 29.375; ACT1 at max(PRE + 15.625 =
    // 45.0, ACT0 + tRC = 0.625 + 45 = 45.625) = 45.625 (tRC binds: tRAS + tRP = 44.375 < tRC);
    // RD1 at 45.625 + 19.6875 = 65.3125, ends 65.3125 + 13.75 = 79.0625.
    const h2 = harness();
    const a = at(h2, 0, "read", 0);
    const b = at(h2, 0, "read", ROW(1));
    expect(done(h2, a, b)).toEqual([expect.closeTo(34.0625, 6), expect.closeTo(79.0625, 6)]);

    // Without tRC (t_rc_ns 0) the tRAS -> tRP path shows: ACT1 at 29.375 + 15.625 = 45.0,
    // RD1 at 64.6875, ends 64.6875 + 13.75 = 78.4375.
    const h3 = harness({ t_rc_ns: 0 });
    const c = at(h3, 0, "read", 0);
    const d = at(h3, 0, "read", ROW(1));
    expect(done(h3, c, d)).toEqual([expect.closeTo(34.0625, 6), expect.closeTo(78.4375, 6)]);
  });

  it("4. bank conflict vs two banks: two rows of one bank finish later than two banks in parallel", () => {
    // One bank, rows 0 and 1, both at 0: 79.0625 (case 3).
    const h = harness();
    const a = at(h, 0, "read", 0);
    const b = at(h, 0, "read", ROW(1));
    const [, sameBank] = done(h, a, b);
    expect(sameBank).toBeCloseTo(79.0625, 6);
    // Two banks (bank group 0 and 1), both at 0: ACT0 at 0.625; ACT1 tRRD_S later, 0.625 + 2.5 =
    // 3.125 (the row bus is free at 0.625 + 0.9375 = 1.5625); RD1 at 3.125 + 19.6875 = 22.8125
    // (RD0 at 20.3125 + tCCD_S 1.25 / tBL 1.25 = 21.5625 < 22.8125); ends 22.8125 + 13.75 = 36.5625.
    const h2 = harness();
    const c = at(h2, 0, "read", 0);
    const d = at(h2, 0, "read", BG(1));
    const [first, twoBanks] = done(h2, c, d);
    expect(first).toBeCloseTo(34.0625, 6);
    expect(twoBanks).toBeCloseTo(36.5625, 6);
    expect((sameBank as number) - (twoBanks as number)).toBeCloseTo(42.5, 6); // 79.0625 - 36.5625
  });

  it("5. tRRD_S vs tRRD_L: the second ACT 2.5 ns after the first in another bank group, 3.125 ns in the same", () => {
    // Other bank group: ACT1 at 0.625 + tRRD_S 2.5 = 3.125, ends 3.125 + 19.6875 + 13.75 = 36.5625.
    const h = harness();
    const a = at(h, 0, "read", 0);
    const b = at(h, 0, "read", BG(1));
    expect(done(h, a, b)[1]).toBeCloseTo(36.5625, 6);
    // Same bank group, other bank: ACT1 at 0.625 + tRRD_L 3.125 = 3.75, RD1 at 3.75 + 19.6875 =
    // 23.4375, ends 23.4375 + 13.75 = 37.1875.
    const h2 = harness();
    const c = at(h2, 0, "read", 0);
    const d = at(h2, 0, "read", BANK(1));
    expect(done(h2, c, d)[1]).toBeCloseTo(37.1875, 6);
    // Another SID is another bank group too (tRRD_S): as the first, 36.5625.
    const h3 = harness();
    const e = at(h3, 0, "read", 0);
    const f = at(h3, 0, "read", SID(1));
    expect(done(h3, e, f)[1]).toBeCloseTo(36.5625, 6);
  });

  it("6. tFAW: the fifth of five ACTs at once waits for the first ACT + tFAW", () => {
    // Five banks in five bank groups (SID 0 groups 0-3, SID 1 group 0), all at 0. ACTs tRRD_S
    // apart: 0.625, 3.125, 5.625, 8.125; the fifth at max(8.125 + 2.5 = 10.625, first ACT + tFAW
    // = 0.625 + 15 = 15.625) = 15.625; RD5 at 15.625 + 19.6875 = 35.3125 (the column bus is free:
    // RD1-4 at 20.3125, 22.8125, 25.3125, 27.8125, + tCCD_R 1.875 = 29.6875 for the other SID);
    // ends 35.3125 + 13.75 = 49.0625. The fourth: 8.125 + 19.6875 + 13.75 = 41.5625.
    const offsets = [0, BG(1), BG(2), BG(3), SID(1)];
    const h = harness();
    const reads = offsets.map((offset) => at(h, 0, "read", offset));
    const ends = done(h, ...reads);
    expect(ends).toEqual([34.0625, 36.5625, 39.0625, 41.5625, 49.0625].map((x) => expect.closeTo(x, 6)));
    // With tFAW 0 the fifth ACT is at 10.625: ends 10.625 + 19.6875 + 13.75 = 44.0625.
    const h2 = harness({ t_faw_ns: 0 });
    const reads2 = offsets.map((offset) => at(h2, 0, "read", offset));
    expect(done(h2, ...reads2)[4]).toBeCloseTo(44.0625, 6);
  });

  it("7. refresh stall: a read just after k x tREFI waits for tRFC", () => {
    // All-bank refresh: REFab of the idle port at k x 3900; the next ACT at REF + REF->ACT
    // 349.375. k = 1, read at 3901: ACT at 3900 + 349.375 = 4249.375, RD at 4249.375 + 19.6875 =
    // 4269.0625, ends 4269.0625 + 13.75 = 4282.8125 (latency 381.8125).
    const h = harness({ refresh: "all_bank" });
    const r1 = at(h, 3901, "read", 0);
    expect(done(h, r1)[0]).toBeCloseTo(4282.8125, 6);
    // k = 3, read at 11701. Bank 0 was left open, so the refresh due at 7800 is PREab at 7800,
    // REFab tRP later (7816.25); at 11700 every bank is closed: REFab at 11700, ACT at 11700 +
    // 349.375 = 12049.375, ends 12049.375 + 19.6875 + 13.75 = 12082.8125.
    const r3 = at(h, 11701, "read", ROW(5));
    expect(done(h, r3)[0]).toBeCloseTo(12082.8125, 6);
    // After the refresh cycle (at 4300 > 3900 + 349.375) a read is an idle miss again:
    // 4300 + 34.0625 = 4334.0625.
    const h2 = harness({ refresh: "all_bank" });
    const late = at(h2, 4300, "read", 0);
    expect(done(h2, late)[0]).toBeCloseTo(4334.0625, 6);
  });

  it("8. turnarounds: RD->WR tRTW, WR->RD tCWL + tBL + tWTR_S / tWTR_L", () => {
    // Read at 0: RD at 20.3125 (case 1). A write to the same row arriving at 21 (after the RD):
    // WR at max(21 + FE = 21.625, ACT + ACT->WR = 0.625 + 9.6875, RD + tRTW = 20.3125 + 12.5 =
    // 32.8125) = 32.8125; done 32.8125 + tCWL 6.25 + tBL 1.25 = 40.3125.
    const h = harness();
    const read = at(h, 0, "read", 0);
    const write = at(h, 21, "write", COL(1));
    expect(done(h, read, write)).toEqual([expect.closeTo(34.0625, 6), expect.closeTo(40.3125, 6)]);

    // Write -> read. Bank group 1's bank opened by a read at 0 (ACT 0.625); a write to bank
    // group 0 at 100: ACT 100.625, WR at 100.625 + 9.6875 = 110.3125, done 110.3125 + 7.5 =
    // 117.8125. Then at 111 a read:
    // - other bank group (row 0 of BG 1, open): RD at max(111.625, WR + 6.25 + 1.25 + tWTR_S
    //   4.375 = 122.1875) = 122.1875, ends 122.1875 + 13.75 = 135.9375;
    const h2 = harness();
    const open2 = at(h2, 0, "read", BG(1));
    const w2 = at(h2, 100, "write", 0);
    const rS = at(h2, 111, "read", BG(1) + COL(1));
    expect(done(h2, open2, w2, rS)).toEqual([34.0625, 117.8125, 135.9375].map((x) => expect.closeTo(x, 6)));
    // - same bank group (row 0 of BG 0, the written row): RD at max(111.625, ACT + 19.6875 =
    //   120.3125, WR + 6.25 + 1.25 + tWTR_L 6.25 = 124.0625) = 124.0625, ends 137.8125.
    const h3 = harness();
    const open3 = at(h3, 0, "read", BG(1));
    const w3 = at(h3, 100, "write", 0);
    const rL = at(h3, 111, "read", COL(1));
    expect(done(h3, open3, w3, rL)).toEqual([34.0625, 117.8125, 137.8125].map((x) => expect.closeTo(x, 6)));
  });

  it("9. FR-FCFS: with a row open, a younger hit is served before an older conflict", () => {
    // Row 0 of bank 0 open (read at 0). At 100 an older read to row 1 (conflict: PRE ready at
    // 100.625) and a younger one to row 0 (hit: RD ready at 100.625). The column command goes
    // first: hit RD at 100.625, ends 100.625 + 13.75 = 114.375. The conflict's PRE then waits for
    // RD->PRE: 100.625 + 5.9375 = 106.5625; ACT at 106.5625 + 15.625 = 122.1875 (tRC from 0.625
    // is 45.625); RD at 122.1875 + 19.6875 = 141.875; ends 141.875 + 13.75 = 155.625.
    // (FCFS would serve the conflict first: PRE 100.625, ACT 116.25, RD 135.9375, and the hit
    // would then find row 1 open.)
    const h = harness();
    const open = at(h, 0, "read", 0);
    const miss = at(h, 100, "read", ROW(1));
    const hit = at(h, 100, "read", COL(1));
    const [, missEnd, hitEnd] = done(h, open, miss, hit);
    expect(hitEnd).toBeCloseTo(114.375, 6);
    expect(missEnd).toBeCloseTo(155.625, 6);
  });

  it("10. closed page: a second read to the same row pays the ACT and tRCD again", () => {
    // page_policy closed: the bank is precharged after the read (at ACT + ACT->PRE = 29.375).
    // A read to the same row at 100: ACT at 100.625, RD 120.3125, ends 134.0625 (latency
    // 34.0625, an idle miss, against 14.375 for the hit of case 2).
    const h = harness({ page_policy: "closed" });
    const first = at(h, 0, "read", 0);
    const again = at(h, 100, "read", COL(1));
    expect(done(h, first, again)).toEqual([expect.closeTo(34.0625, 6), expect.closeTo(134.0625, 6)]);
    // At 40 instead: the ACT waits for max(PRE 29.375 + 15.625 = 45.0, ACT + tRC = 45.625) =
    // 45.625; RD at 65.3125; ends 79.0625.
    const h2 = harness({ page_policy: "closed" });
    const first2 = at(h2, 0, "read", 0);
    const soon = at(h2, 40, "read", COL(1));
    expect(done(h2, first2, soon)).toEqual([expect.closeTo(34.0625, 6), expect.closeTo(79.0625, 6)]);
  });
});
