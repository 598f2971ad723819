// hbm_ctrl_v2 beyond single constraints (hbm3 preset, numbers as in constraints.test.ts): column
// spacing across bank groups and SIDs, write drain, per-bank refresh, queue room, predicted
// answers of long requests, and a randomized run checked against invariants.
//
// Derived values used below (constraints.test.ts explains them): front end FE 0.625; an idle
// miss's RD at 20.3125 (ACT 0.625 + 19.6875), ends 34.0625; a second bank's ACT tRRD_S (2.5) or
// tRRD_L (3.125) after the first; read data ends RD + tCL 12.5 + tBL 1.25 = RD + 13.75.

import { MemoryHarness } from "@kb/probe";
import { describe, expect, it } from "vitest";
import { graphFrom } from "../../../components/src/test-support.js";
import type { HbmCtrlV2Model } from "./hbm-ctrl-v2.js";

const COL = (n: number) => n << 10;
const SID = (n: number) => n << 15;
const BG = (n: number) => n << 16;
const BANK = (n: number) => n << 18;

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
          mapping: "RoBaBgSiPcCo4ChCo1",
          params: { refresh: "none", ...params },
        },
      },
    }),
  );
}

type Req = ReturnType<MemoryHarness["request"]>;

function at(h: MemoryHarness, t: number, kind: "read" | "write", offset: number, bytes = 32): Req {
  if (h.machine.env.now < t) h.machine.env.run(t);
  return h.request(kind, offset, bytes);
}

function done(h: MemoryHarness, ...requests: Req[]): number[] {
  h.machine.run();
  return requests.map((r) => r.value.doneNs);
}

const model = (h: MemoryHarness) => h.memory.model as HbmCtrlV2Model;

describe("hbm_ctrl_v2 column spacing", () => {
  // Two banks opened by reads at 0, then two row hits at 100: the first RD at 100.625 (ends
  // 114.375), the second as late as the pair's column-to-column constraint says.
  function pair(second: number): number[] {
    const h = harness();
    const opened = [at(h, 0, "read", 0), at(h, 0, "read", second)];
    const hits = [at(h, 100, "read", COL(1)), at(h, 100, "read", second + COL(1))];
    return done(h, ...opened, ...hits).slice(2);
  }

  it("tCCD_S: another bank group of the SID, 1.25 ns (= tBL) later: ends 101.875 + 13.75 = 115.625", () => {
    expect(pair(BG(1))).toEqual([expect.closeTo(114.375, 6), expect.closeTo(115.625, 6)]);
  });

  it("tCCD_R: another SID, 1.875 ns later: 102.5 + 13.75 = 116.25", () => {
    expect(pair(SID(1))).toEqual([expect.closeTo(114.375, 6), expect.closeTo(116.25, 6)]);
  });

  it("tCCD_L: another bank of the bank group, 2.5 ns later: 103.125 + 13.75 = 116.875", () => {
    expect(pair(BANK(1))).toEqual([expect.closeTo(114.375, 6), expect.closeTo(116.875, 6)]);
  });

  it("one long run is timed in closed form, tCCD_L apart: 32 bursts of one row end at 20.3125 + 31 x 2.5 + 13.75", () => {
    // 16 KiB from 0: 1 KiB (32 bursts, one full row of bank 0) on each of the 16 PC-0 ports.
    const h = harness();
    expect(done(h, at(h, 0, "read", 0, 16384))[0]).toBeCloseTo(111.5625, 6);
    expect(model(h).stats(0)).toMatchObject({ readBursts: 32, readMisses: 1, activates: 1 });
  });
});

describe("hbm_ctrl_v2 write drain (write_high 80%, write_low 20% of 32 bursts)", () => {
  // Writes of 64 B to columns of row 0 in bank group 0, reads of 64 B in bank group 1, all at 0.
  const writes = (h: MemoryHarness, n: number) =>
    Array.from({ length: n }, (_, i) => at(h, 0, "write", COL(i), 64));
  const reads = (h: MemoryHarness) =>
    Array.from({ length: 4 }, (_, i) => at(h, 0, "read", BG(1) + COL(i), 64));

  it("below the high watermark reads go first; the writes wait until no read is queued", () => {
    const h = harness();
    const w = writes(h, 4); // 8 bursts <= 25.6
    const r = reads(h);
    const ends = done(h, ...w, ...r);
    expect(Math.max(...ends.slice(4))).toBeLessThan(Math.min(...ends.slice(0, 4)));
  });

  it("above it (26 bursts > 25.6) writes drain first, down to 6 bursts (< 6.4), then the reads, then the rest", () => {
    const h = harness();
    const w = writes(h, 13);
    const r = reads(h);
    const ends = done(h, ...w, ...r);
    const firstTen = ends.slice(0, 10);
    const lastThree = ends.slice(10, 13);
    const readEnds = ends.slice(13);
    expect(Math.max(...firstTen)).toBeLessThan(Math.min(...readEnds));
    expect(Math.min(...lastThree)).toBeGreaterThan(Math.max(...readEnds));
  });
});

describe("hbm_ctrl_v2 per-bank refresh", () => {
  it("REFpb of bank 0 at tREFIpb = 121.875: its next ACT waits tRFCpb, other banks tRREFD", () => {
    // Bank 0: ACT at REFpb + tRFCpb + (PRE/REF - ACT length) = 121.875 + 200 - 0.625 = 321.25;
    // RD at 321.25 + 19.6875 = 340.9375; ends 354.6875.
    const h = harness({ refresh: "per_bank" });
    expect(done(h, at(h, 122, "read", 0))[0]).toBeCloseTo(354.6875, 6);
    // Bank 1 of the same bank group: ACT at max(122.625, 121.875 + tRREFD 5 - 0.625 = 126.25);
    // RD at 145.9375; ends 159.6875.
    const h2 = harness({ refresh: "per_bank" });
    expect(done(h2, at(h2, 122, "read", BANK(1)))[0]).toBeCloseTo(159.6875, 6);
    expect(model(h2).stats(0).refreshes).toBeGreaterThanOrEqual(1);
  });
});

describe("hbm_ctrl_v2 queues", () => {
  it("room counts bursts of the read queue; back-pressure holds whole requests (max_pending)", () => {
    const h = harness();
    const m = model(h);
    expect(m.maxPending).toBe(32); // (32 + 32) / 2
    expect(m.room(0, "read")).toBe(32);
    at(h, 0, "read", 0, 64);
    h.machine.env.run(0.1); // serviced, no command yet (the ACT is at 0.625)
    expect(m.room(0, "read")).toBe(30);
    expect(m.room(0, "write")).toBe(32);
    for (let i = 1; i < 16; i++) h.request("read", COL(i), 64);
    h.machine.env.run(0.2);
    expect(m.room(0, "read")).toBe(0);
    h.request("read", BG(1), 64); // waits for room, in arrival order
    h.machine.env.run(0.3);
    expect(m.room(0, "read")).toBe(0);
    h.machine.run();
    expect(m.stats(0).readBursts).toBe(34);
  });
});

describe("hbm_ctrl_v2 answers", () => {
  // Two 8 KiB reads at 0, one to bank group 0 and one to bank group 1: 16 bursts of one row on
  // each PC-0 port each (both fit the 32-burst read queue). Their bursts alternate (FR-FCFS,
  // tCCD_S): A's RDs at 20.3125 + 2.5 k, B's at 24.0625 + 2.5 k (k = 0..15; B's ACT is tRRD_S
  // after A's, and at 22.8125 the older A wins the tie). A ends 57.8125 + 13.75 = 71.5625,
  // B 61.5625 + 13.75 = 75.3125.
  function twoLong(params: Record<string, unknown>): { ends: number[]; predictions: number } {
    const h = harness(params);
    const ends = done(h, at(h, 0, "read", 0, 8192), at(h, 0, "read", BG(1), 8192));
    return { ends, predictions: model(h).stats(0).predictions };
  }

  it("a long request is answered at its first data with its predicted end: the same end as answering at its last burst", () => {
    const predicted = twoLong({ predict_bytes: 0 });
    const atLast = twoLong({});
    expect(predicted.predictions).toBe(2);
    expect(atLast.predictions).toBe(0);
    expect(predicted.ends).toEqual([expect.closeTo(71.5625, 6), expect.closeTo(75.3125, 6)]);
    expect(atLast.ends).toEqual(predicted.ends);
  });

  it("a request that does not fit the read queue waits for room (head of line)", () => {
    // 16 KiB per request: 32 bursts per port fill the read queue; the second request enters
    // only when the first has issued its last burst (at 20.3125 + 31 x 2.5 = 97.8125), so its
    // ACT (tRC long past) is at 97.8125, RD 117.5, last RD 117.5 + 77.5 = 195, ends 208.75. With
    // command_bus: channel the same: the ACT is a row command and the RD at 97.8125 a column
    // command, one of each per tick (with one slot for both, before issue 37's second pass, the
    // ACT went 0.3125 later and the second request ended at 209.0625).
    const run = (params: Record<string, unknown>) => {
      const h = harness(params);
      return done(h, at(h, 0, "read", 0, 16384), at(h, 0, "read", BG(1), 16384));
    };
    expect(run({ command_bus: "channel" })).toEqual([expect.closeTo(111.5625, 6), expect.closeTo(208.75, 6)]);
    expect(run({})).toEqual([expect.closeTo(111.5625, 6), expect.closeTo(208.75, 6)]);
  });

  it("random traffic: every request answered, none faster than an idle row hit, data bus never over-booked", () => {
    const h = harness({ refresh: "all_bank" });
    const env = h.machine.env;
    let x = 7;
    const random = () => {
      x = (x * 1103515245 + 12345) % 2147483648;
      return x / 2147483648;
    };
    const requests: { req: Req; kind: "read" | "write" }[] = [];
    for (let i = 0; i < 1500; i++) {
      const t = Math.floor(random() * 20000);
      const kind = random() < 0.3 ? "write" : "read";
      const offset = Math.floor(random() * 2 ** 26) & ~31;
      const bytes = [32, 64, 256, 1024][Math.floor(random() * 4)] as number;
      env.timeout(t).addCallback(() => requests.push({ req: h.request(kind, offset, bytes), kind }));
    }
    h.machine.run();
    expect(requests).toHaveLength(1500);
    for (const { req, kind } of requests) {
      expect(req.triggered).toBe(true);
      // Idle row hit: FE + tCL + tBL = 14.375 (read); FE + tCWL + tBL = 8.125 (write).
      expect(req.value.doneNs - req.value.arrivalNs).toBeGreaterThanOrEqual(
        kind === "read" ? 14.375 - 1e-6 : 8.125 - 1e-6,
      );
    }
    const m = model(h);
    for (let port = 0; port < 32; port++) {
      const s = m.stats(port);
      expect((s.readBursts + s.writeBursts) * 1.25).toBeLessThanOrEqual(env.now + 1e-6);
    }
    expect(m.stats(0).refreshes).toBeGreaterThanOrEqual(5); // 20 us / 3.9 us
  }, 60_000);
});
