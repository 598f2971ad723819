// hbm_ctrl_v2's channel-level queues (Ramulator 2.1: one controller per channel, whose 32-entry
// read and 32-entry write buffers serve both pseudo-channels). hbm3 preset, RoBaBgSiPcCo4ChCo1:
// ports 0 and 1 are PCs 0 and 1 of channel 0 (PC bit [14]). Numbers as in constraints.test.ts:
// front end 0.625; an idle miss's ACT at 0.625, RD 19.6875 later (20.3125); tCCD_L 2.5 between
// bursts of one bank; read data ends RD + tCL 12.5 + tBL 1.25.
import { describe, expect, it } from "vitest";
import { doneTimes, hbm3Harness, hbmModel, requestAt } from "./test-support.js";

const COL = (n: number) => n << 10;
const PC1 = 1 << 14;

describe("hbm_ctrl_v2 queues shared by a channel's pseudo-channels (queue_scope)", () => {
  it("channel: PC 0's 16 lines (32 bursts) fill the channel's read queue, PC 1 has no room", () => {
    const h = hbm3Harness({ queue_scope: "channel" });
    const m = hbmModel(h);
    for (let i = 0; i < 16; i++) requestAt(h, 0, "read", COL(i), 64);
    h.machine.env.run(0.1);
    expect([m.room(0, "read"), m.room(1, "read"), m.room(1, "write"), m.room(2, "read")]).toEqual([
      0, 0, 32, 32,
    ]);
  });

  it("pseudo_channel (the default): each PC has its own 32 bursts", () => {
    const h = hbm3Harness({ queue_scope: "pseudo_channel" });
    const m = hbmModel(h);
    for (let i = 0; i < 16; i++) requestAt(h, 0, "read", COL(i), 64);
    h.machine.env.run(0.1);
    expect([m.room(0, "read"), m.room(1, "read")]).toEqual([0, 32]);
  });

  it("a PC 1 read that does not fit waits until PC 0's bursts free two entries, then starts (ends 56.25, not 36.5625)", () => {
    // PC 0: ACT at 0.625 frees one entry (the activating request leaves the queue), the RD at
    // 20.3125 a second (its run's other burst at 22.8125 is decided in the same wake-up, within
    // the 4 tCK decision horizon). PC 1's line is admitted at 20.3125: ACT 20.3125, RDs 40 and
    // 42.5, data ends 42.5 + 13.75 = 56.25. With pseudo_channel queues it starts at once: ACT
    // 0.625, RDs 20.3125 and 22.8125, ends 36.5625; with a shared command bus PC 0's ACT holds the
    // channel's row lane for its 1.5 CK (three 0.3125 ns slots, 0.625 to 1.5625): ACT 1.5625, RDs
    // 21.25 and 23.75, ends 37.5.
    const run = (params: Record<string, unknown>) => {
      const h = hbm3Harness(params);
      for (let i = 0; i < 16; i++) requestAt(h, 0, "read", COL(i), 64);
      return doneTimes(h, requestAt(h, 0, "read", PC1, 64))[0];
    };
    expect(run({ queue_scope: "channel" })).toBeCloseTo(56.25, 6);
    expect(run({ queue_scope: "pseudo_channel" })).toBeCloseTo(36.5625, 6);
    expect(run({ queue_scope: "pseudo_channel", command_bus: "channel" })).toBeCloseTo(37.5, 6);
  });

  it("command_bus channel: an ACT holds the channel's row lane for 1.5 CK, three 0.3125 ns slots (the default pseudo_channel: none)", () => {
    // Idle misses on PC 0 and PC 1 at 0: both ACTs want 0.625; PC 0's takes the slots 0.625,
    // 0.9375 and 1.25 (Ramulator's Channel-level bus occupancy of a 1.5 CK ACT), PC 1's goes at
    // 1.5625: RD 1.5625 + 19.6875 = 21.25, ends 35 (PC 0: 34.0625). Another channel (port 2,
    // channel bit [6]) keeps its own slots.
    const h = hbm3Harness({ command_bus: "channel" });
    const ends = doneTimes(
      h,
      requestAt(h, 0, "read", 0),
      requestAt(h, 0, "read", PC1),
      requestAt(h, 0, "read", 64),
    );
    expect(ends).toEqual([expect.closeTo(34.0625, 6), expect.closeTo(35, 6), expect.closeTo(34.0625, 6)]);
    const h2 = hbm3Harness();
    const ends2 = doneTimes(h2, requestAt(h2, 0, "read", 0), requestAt(h2, 0, "read", PC1));
    expect(ends2).toEqual([expect.closeTo(34.0625, 6), expect.closeTo(34.0625, 6)]);
  });

  it("command_bus channel: a row and a column command share a slot (Ramulator tries one of each per tick)", () => {
    // PC 0: a line at 0, ACT 0.625, RDs 20.3125 and 22.8125, ends 36.5625. PC 1: a line at
    // 19.6875 (front end 0.625): its ACT wants 20.3125, the slot of PC 0's first RD, and takes it
    // (one slot for both would move one of them by 0.3125): RDs 40 and 42.5, ends 56.25.
    const ends = (params: Record<string, unknown>) => {
      const h = hbm3Harness(params);
      const a = requestAt(h, 0, "read", 0, 64);
      return doneTimes(h, a, requestAt(h, 19.6875, "read", PC1, 64));
    };
    expect(ends({})).toEqual([expect.closeTo(36.5625, 6), expect.closeTo(56.25, 6)]);
    expect(ends({ command_bus: "channel" })).toEqual([expect.closeTo(36.5625, 6), expect.closeTo(56.25, 6)]);
  });

  it("command_bus channel: one column command per CK (0.625 ns) for both PCs, on its own lane", () => {
    // One-burst reads (32 B). Two misses at 0 open a row on each PC (PC 1's ACT after PC 0's
    // three row slots, as above). At 100 a row hit arrives on each: both RDs want 100.625 (front
    // end), CK 161; PC 0's takes it, PC 1's goes at CK 162 = 101.25: ends + tCL + tBL = 114.375
    // and 115. With pseudo-channel buses both at 100.625.
    const ends = (params: Record<string, unknown>) => {
      const h = hbm3Harness(params);
      requestAt(h, 0, "read", 0);
      requestAt(h, 0, "read", PC1);
      const a = requestAt(h, 100, "read", COL(1));
      return doneTimes(h, a, requestAt(h, 100, "read", PC1 + COL(1)));
    };
    expect(ends({ command_bus: "channel" })).toEqual([expect.closeTo(114.375, 6), expect.closeTo(115, 6)]);
    expect(ends({})).toEqual([expect.closeTo(114.375, 6), expect.closeTo(114.375, 6)]);
  });

  it("write drain is decided on the channel's write queue: PC 0's 13 lines of writes (26 > 25.6) put PC 1's reads behind PC 1's writes", () => {
    // PC 1 holds 2 lines of writes and 4 of reads; alone (pseudo_channel) its reads go first.
    const run = (params: Record<string, unknown>) => {
      const h = hbm3Harness(params);
      for (let i = 0; i < 13; i++) requestAt(h, 0, "write", COL(i), 64);
      const w = [0, 1].map((i) => requestAt(h, 0, "write", PC1 + COL(i), 64));
      const r = [0, 1, 2, 3].map((i) => requestAt(h, 0, "read", PC1 + (1 << 16) + COL(i), 64));
      const ends = doneTimes(h, ...w, ...r);
      return Math.max(...ends.slice(0, 2)) < Math.min(...ends.slice(2));
    };
    expect(run({ queue_scope: "channel" })).toBe(true);
    expect(run({ queue_scope: "pseudo_channel" })).toBe(false);
  });

  it("a predicted answer whose rest waits for room a peer frees is answered at its last burst (was: a prediction that could not finish)", () => {
    // Mapping RoPcChBaBgSiCo: a 1 KiB row is one pseudo-channel's columns, SID at bit 10, PC at
    // bit 19. T (2 KiB at 0) is two 32-burst entries of port 0 (SID 0 and SID 1 row 0); P (64 B
    // at 1) is two bursts of port 1, the same channel. T's SID-0 entry fills the channel's read
    // queue; its ACT (0.625) and first RD (20.3125) free two bursts and P is admitted. At T's
    // first data (20.3125 + tCL) it is predicted alone, on port 0: once its SID-0 bursts are out
    // its SID-1 entry still waits for P's two (its peer's, frozen in a prediction), so the
    // prediction stops and T is answered when it finishes. In fact P's bursts leave by 42.5, and
    // T's SID-1 entry is admitted as its SID-0 entry's last RD issues (20.3125 + 31 x 2.5 =
    // 97.8125): ACT 97.8125, RD 117.5, last RD 195, ends 208.75, as if never predicted.
    const run = (predictBytes: number) => {
      const h = hbm3Harness(
        { queue_scope: "channel", predict_bytes: predictBytes },
        "hbm_ctrl_v2",
        [],
        "RoPcChBaBgSiCo",
      );
      const t = requestAt(h, 0, "read", 0, 2048);
      const p = requestAt(h, 1, "read", 1 << 19, 64);
      const ends = doneTimes(h, t, p);
      const m = hbmModel(h);
      return { ends, predictions: [m.stats(0).predictions, m.stats(1).predictions] };
    };
    const predicted = run(64);
    expect(predicted.ends[0]).toBeCloseTo(208.75, 6);
    // T's prediction stopped and is not counted (P's two RDs, 2.5 apart, issue in one wake-up:
    // it is answered finished, not predicted).
    expect(predicted.predictions).toEqual([0, 0]);
    expect(predicted.ends).toEqual(run(1 << 30).ends);
  });
});
