// The swappable policies of hbm_ctrl_v2 (policies/): scheduler (fr_fcfs, fcfs, fr_fcfs_cap),
// page (open, closed, adaptive), refresh (all_bank, per_bank), and a plug-in's own policy
// object through hbmCtrlV2WithPolicies. hbm3 preset; every expected time is worked out in its
// comment from the preset and the derived values of constraints.test.ts:
//   FE 0.625; ACT->RD 19.6875; ACT->PRE 28.75; PRE->ACT 15.625; RD->PRE 5.9375; tRC 45;
//   tCCD_L 2.5 (reads of one bank); a read's data ends RD + tCL 12.5 + tBL 1.25 = RD + 13.75.
// Addresses (RoBaBgSiPcCo4ChCo1): all on port 0, bank 0 unless said; COL(n) another column of
// the same row, ROW(n) another row of bank 0.

import { definePlugin, type KbPlugin } from "@kb/components";
import { KbError } from "@kb/errors";
import { describe, expect, it } from "vitest";
import type { HbmPagePolicy } from "./policies/policy.js";
import {
  requestAt as at,
  doneTimes as done,
  hbm3Harness as harness,
  hbmModel as model,
} from "./test-support.js";
import { hbmCtrlV2WithPolicies } from "./with-policies.js";

const COL = (n: number) => n << 10;
const ROW = (n: number) => n * 2 ** 20;

const close = (xs: number[]) => xs.map((x) => expect.closeTo(x, 6));

describe("hbm_ctrl_v2 scheduler policy", () => {
  // Row 0 of bank 0 opened by a read at 0 (ACT 0.625, RD 20.3125, ends 34.0625). At 100 an older
  // read to row 1 (a conflict) and a younger one to row 0 (a hit), both visible at 100.625.
  function conflictThenHit(params: Record<string, unknown>) {
    const h = harness(params);
    const open = at(h, 0, "read", 0);
    const miss = at(h, 100, "read", ROW(1));
    const hit = at(h, 100, "read", COL(1));
    return { ends: done(h, open, miss, hit), stats: model(h).stats(0) };
  }

  it("fr_fcfs (default): the younger hit goes first", () => {
    // Hit RD 100.625, ends 114.375; the conflict's PRE waits RD->PRE: 106.5625, ACT 122.1875,
    // RD 141.875, ends 155.625 (constraints.test.ts case 9).
    const { ends, stats } = conflictThenHit({});
    expect(ends).toEqual(close([34.0625, 155.625, 114.375]));
    expect(stats).toMatchObject({ readMisses: 1, readConflicts: 1, readHits: 1 });
    expect(conflictThenHit({ scheduler: "fr_fcfs" }).ends).toEqual(ends);
  });

  it("fcfs: the older conflict goes first, and the hit, now a conflict too, waits for it", () => {
    // Conflict: PRE 100.625, ACT 100.625 + 15.625 = 116.25, RD 116.25 + 19.6875 = 135.9375,
    // ends 149.6875. Row 1 is now open: the younger read's PRE at max(RD + RD->PRE = 141.875,
    // ACT + ACT->PRE = 145.0) = 145.0; ACT at max(145 + 15.625 = 160.625, 116.25 + tRC 45 =
    // 161.25) = 161.25; RD 161.25 + 19.6875 = 180.9375; ends 194.6875.
    const { ends, stats } = conflictThenHit({ scheduler: "fcfs" });
    expect(ends).toEqual(close([34.0625, 149.6875, 194.6875]));
    expect(stats).toMatchObject({ readMisses: 1, readConflicts: 2, readHits: 0 });
  });

  // The opening read at 0, then at 100 an older read to row 1 and four younger 32 B hits to row 0.
  function capRun(params: Record<string, unknown>): number[] {
    const h = harness(params);
    const open = at(h, 0, "read", 0);
    const miss = at(h, 100, "read", ROW(1));
    const hits = [1, 2, 3, 4].map((n) => at(h, 100, "read", COL(n)));
    return done(h, open, miss, ...hits).slice(1);
  }

  it("fr_fcfs: all four hits go ahead of the older conflict", () => {
    // Hits at 100.625 + 2.5 i (tCCD_L): end 114.375, 116.875, 119.375, 121.875. The conflict's
    // PRE after the last: 108.125 + 5.9375 = 114.0625; ACT 129.6875; RD 149.375; ends 163.125.
    expect(capRun({})).toEqual(close([163.125, 114.375, 116.875, 119.375, 121.875]));
  });

  it("fr_fcfs_cap with scheduler_cap 2: after two hits the older conflict goes, then the rest", () => {
    // Hits 1 and 2 at 100.625 and 103.125 (ends 114.375, 116.875). Hit 3 is capped: the
    // conflict's PRE at 103.125 + 5.9375 = 109.0625, ACT 124.6875, RD 144.375, ends 158.125.
    // Hits 3 and 4 now find row 1 open: PRE at max(144.375 + 5.9375, 124.6875 + 28.75 =
    // 153.4375); ACT at max(153.4375 + 15.625, 124.6875 + 45 = 169.6875) = 169.6875; RD3 at
    // 189.375 (ends 203.125), RD4 tCCD_L later at 191.875 (ends 205.625).
    const capped = capRun({ scheduler: "fr_fcfs_cap", scheduler_cap: 2 });
    expect(capped).toEqual(close([158.125, 114.375, 116.875, 203.125, 205.625]));
    // A cap above the hits waiting changes nothing.
    expect(capRun({ scheduler: "fr_fcfs_cap", scheduler_cap: 4 })).toEqual(capRun({}));
  });
});

describe("hbm_ctrl_v2 page policy", () => {
  // Reads of row 0, bank 0: A and B (another column) at 0, C at 100.
  function pages(page_policy: string): number[] {
    const h = harness({ page_policy });
    const a = at(h, 0, "read", 0);
    const b = at(h, 0, "read", COL(1));
    const c = at(h, 100, "read", COL(2));
    return done(h, a, b, c);
  }

  it("open: B and C are row hits", () => {
    // A: ACT 0.625, RD 20.3125, ends 34.0625; B tCCD_L later: 22.8125, ends 36.5625; C: RD at
    // 100.625, ends 114.375.
    expect(pages("open")).toEqual(close([34.0625, 36.5625, 114.375]));
  });

  it("closed: every run precharges, so B and C each pay an ACT", () => {
    // A's run ends at RD 20.3125: PRE at max(ACT + ACT->PRE = 29.375, RD + RD->PRE = 26.25) =
    // 29.375. B: ACT at max(29.375 + 15.625 = 45.0, 0.625 + tRC 45 = 45.625) = 45.625, RD
    // 65.3125, ends 79.0625; PRE at max(45.625 + 28.75 = 74.375, 71.25) = 74.375. C: ACT at
    // max(100.625, 90.0, 90.625) = 100.625, RD 120.3125, ends 134.0625.
    expect(pages("closed")).toEqual(close([34.0625, 79.0625, 134.0625]));
  });

  it("adaptive (close_adaptive): open while a queued request hits the row, closed after the last", () => {
    // A's run ends with B queued to its row: left open, B as under open (36.5625). B's run ends
    // with nothing queued: PRE at 29.375; C is then a miss as under closed: 134.0625.
    expect(pages("adaptive")).toEqual(close([34.0625, 36.5625, 134.0625]));
  });
});

describe("hbm_ctrl_v2 refresh policy", () => {
  // An idle port catches up with its refreshes at the next arrival: one read at 40 000 ns.
  function refreshes(refresh: string): number {
    const h = harness({ refresh });
    done(h, at(h, 40000, "read", 0));
    return model(h).stats(0).refreshes;
  }

  it("all_bank: one REFab per tREFI 3900 ns: 10 by 40 000 ns (3900 .. 39 000)", () => {
    expect(refreshes("all_bank")).toBe(10);
  });

  it("per_bank: one REFpb per tREFIpb 121.875 ns: 328 by 40 000 ns (328 x 121.875 = 39 975)", () => {
    expect(refreshes("per_bank")).toBe(328);
  });

  it("none: no refresh", () => {
    expect(refreshes("none")).toBe(0);
  });
});

describe("hbmCtrlV2WithPolicies: a plug-in's own policy object", () => {
  it("replaces one policy and keeps the rest: a page policy closing every row times as closed", () => {
    const always: HbmPagePolicy = { name: "always_close", closeAfterRun: () => true };
    const mine = hbmCtrlV2WithPolicies({ impl: "hbm_always_close", page: always });
    const plugin = definePlugin({ meta: { name: "my-hbm", version: "1.0.0" }, components: [mine] });
    const h = harness({}, "my-hbm:hbm_always_close", [plugin]);
    const a = at(h, 0, "read", 0);
    const b = at(h, 0, "read", COL(1));
    const c = at(h, 100, "read", COL(2));
    expect(done(h, a, b, c)).toEqual(close([34.0625, 79.0625, 134.0625]));
    expect(model(h).config.policies.page.name).toBe("always_close");
    expect(model(h).config.policies.scheduler.name).toBe("fr_fcfs");
    expect(mine.description).toContain("page always_close");
  });

  it("gem5's open_adaptive as a plug-in: a row with a queued conflict and no queued hit is closed after its run", () => {
    // Reads at 0 to row 0 and row 1 of bank 0. Open page: the second finds row 0 open (a conflict)
    // and precharges it at max(ACT 0.625 + ACT->PRE 28.75, RD 20.3125 + RD->PRE 5.9375) = 29.375.
    // open_adaptive precharges at that same time at the end of the first run, so the second finds
    // the bank closed (a miss): ACT at max(29.375 + 15.625, 0.625 + tRC 45) = 45.625 either way,
    // RD 65.3125, ends 79.0625.
    const openAdaptive: HbmPagePolicy = {
      name: "open_adaptive",
      closeAfterRun: (bank, row, queue) => !queue.queuedHit(bank, row) && queue.queuedConflict(bank, row),
    };
    const plugin = definePlugin({
      meta: { name: "my-policies", version: "0.1.0" },
      components: [hbmCtrlV2WithPolicies({ impl: "open_adaptive_hbm", page: openAdaptive })],
    });
    const run = (impl: string, plugins: KbPlugin[]) => {
      const h = harness({}, impl, plugins);
      const ends = done(h, at(h, 0, "read", 0), at(h, 0, "read", ROW(1)));
      return { ends, stats: model(h).stats(0) };
    };
    const open = run("hbm_ctrl_v2", []);
    const adaptive = run("my-policies:open_adaptive_hbm", [plugin]);
    expect(open.ends).toEqual(close([34.0625, 79.0625]));
    expect(adaptive.ends).toEqual(open.ends);
    expect(open.stats).toMatchObject({ readMisses: 1, readConflicts: 1 });
    expect(adaptive.stats).toMatchObject({ readMisses: 2, readConflicts: 0 });
  });

  it("refuses a malformed policy with a KbError naming the field", () => {
    const bad = () => hbmCtrlV2WithPolicies({ impl: "x", page: { name: "p" } as unknown as HbmPagePolicy });
    expect(bad).toThrow(KbError);
    expect(bad).toThrow(/page\.closeAfterRun must be a function/);
    expect(() => hbmCtrlV2WithPolicies({ impl: "x" })).toThrow(/at least one of scheduler, refresh, page/);
  });
});
