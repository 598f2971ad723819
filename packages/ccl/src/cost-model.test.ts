import { describe, expect, it } from "vitest";
import {
  chainModelNs,
  gatherModelNs,
  p2pModelNs,
  ringAllReduceModelNs,
  ringAllToAllModelNs,
  scatterModelNs,
} from "./cost-model.js";
import { NO_PE_WORK, type PieceWork } from "./pe-term.js";

describe("ringAllReduceModelNs", () => {
  it("is 2(n-1) a + 2(n-1)/n S/b (Thakur, Rabenseifner and Gropp 2005)", () => {
    // 8 ranks, 100 ns a hop, 64 GB/s, 1 MiB: 14 x 100 + 1.75 x 16384 ns.
    expect(ringAllReduceModelNs(8, 100, 64, 2 ** 20)).toBeCloseTo(1400 + 1.75 * 16384, 9);
    expect(ringAllReduceModelNs(2, 10, 1, 1000)).toBe(20 + 1000);
    expect(ringAllReduceModelNs(1, 100, 64, 2 ** 20)).toBe(0);
    expect(ringAllReduceModelNs(4, 50, 100, 0)).toBe(300);
  });

  it("approaches 2 S / b for many ranks and rejects bad inputs", () => {
    const big = ringAllReduceModelNs(1000, 0, 1, 1000);
    expect(big).toBeCloseTo(2 * 1000 * (999 / 1000), 9);
    expect(() => ringAllReduceModelNs(0, 1, 1, 1)).toThrow(/n must be a whole number >= 1, got 0/);
    expect(() => ringAllReduceModelNs(2.5, 1, 1, 1)).toThrow(/n must be a whole number/);
    expect(() => ringAllReduceModelNs(2, -1, 1, 1)).toThrow(/hopLatencyNs must be a finite number >= 0/);
    expect(() => ringAllReduceModelNs(2, 1, 0, 1)).toThrow(/bwGbs must be a finite number > 0/);
    expect(() => ringAllReduceModelNs(2, 1, 1, Number.NaN)).toThrow(/bytes must be a finite number >= 0/);
  });
});

describe("the models of all-to-all, reduce, gather / scatter and point-to-point", () => {
  it("ring all-to-all is (n-1) a + (n-1)/2 S/b: step s moves n-1-s blocks of S/n", () => {
    // 4 ranks, 100 ns, 32 GB/s, 1 MiB: 3 x 100 + (3 + 2 + 1) x 2^18 / 32 ns.
    expect(ringAllToAllModelNs(4, 100, 32, 2 ** 20)).toBeCloseTo(300 + (6 * 2 ** 18) / 32, 9);
    expect(ringAllToAllModelNs(1, 100, 32, 2 ** 20)).toBe(0);
  });

  it("a pipelined chain is (n-1) a + (S + (n-2) c)/b, c no more than S", () => {
    // 4 ranks, 16 KiB chunks, 1 MiB: 3 x 643 + (2^20 + 2 x 2^14) / 32.
    expect(chainModelNs(4, 643, 32, 2 ** 20, 2 ** 14)).toBeCloseTo(3 * 643 + (2 ** 20 + 2 ** 15) / 32, 9);
    expect(chainModelNs(3, 10, 1, 100, 16384)).toBe(20 + 100 + 100);
    expect(chainModelNs(1, 10, 1, 100, 16384)).toBe(0);
    expect(() => chainModelNs(3, 10, 1, 100, 0)).toThrow(
      /chainModelNs: chunkBytes must be a finite number > 0/,
    );
  });

  it("gather and scatter are (n-1) a + (n-1) S/b: the root's hop carries n-1 buffers", () => {
    expect(gatherModelNs(4, 643, 32, 2 ** 20)).toBeCloseTo(3 * 643 + (3 * 2 ** 20) / 32, 9);
    expect(() => gatherModelNs(0, 1, 1, 1)).toThrow(/gatherModelNs: n must be a whole number >= 1/);
  });

  it("a transfer of h hops is h a + (S + (h-1) c)/b; between neighbours a + S/b", () => {
    expect(p2pModelNs(1, 643, 32, 2 ** 20, 2 ** 14)).toBeCloseTo(643 + 2 ** 15, 9);
    expect(p2pModelNs(2, 643, 32, 2 ** 20, 2 ** 14)).toBeCloseTo(2 * 643 + (2 ** 20 + 2 ** 14) / 32, 9);
    expect(p2pModelNs(0, 643, 32, 2 ** 20, 2 ** 14)).toBe(0);
  });
});

describe("the PE term (the PE's work per piece, pe-term.ts)", () => {
  // Pieces of c = 16 KiB at b = 32 GB/s: 512 ns on the wire; a = 100 ns a hop. Round figures for
  // the PE's work per piece, so each sum can be checked by eye.
  const a = 100;
  const c = 16384;
  const work: PieceWork = { loadNs: 600, storeNs: 300, combineNs: 100, recvNs: 50, sendNs: 10 };
  const pe = { work, chunkBytes: c, queueSlots: 4 };

  it("adds nothing when the PE does nothing: the per-hop models", () => {
    const none = { work: NO_PE_WORK, chunkBytes: c, queueSlots: 4 };
    expect(chainModelNs(4, a, 32, 2 ** 20, c, NO_PE_WORK)).toBeCloseTo(chainModelNs(4, a, 32, 2 ** 20, c), 9);
    expect(p2pModelNs(2, a, 32, 2 ** 20, c, NO_PE_WORK)).toBeCloseTo(p2pModelNs(2, a, 32, 2 ** 20, c), 9);
    expect(ringAllReduceModelNs(4, a, 32, 2 ** 20, none)).toBeCloseTo(
      ringAllReduceModelNs(4, a, 32, 2 ** 20),
      9,
    );
    expect(ringAllToAllModelNs(4, a, 32, 2 ** 20, none)).toBeCloseTo(
      ringAllToAllModelNs(4, a, 32, 2 ** 20),
      9,
    );
    expect(gatherModelNs(4, a, 32, 2 ** 20, none)).toBeCloseTo(gatherModelNs(4, a, 32, 2 ** 20), 9);
  });

  it("ring all-reduce: each step's pieces pass at the slower of the wire and the PE", () => {
    // n = 2, S = 64 KiB: one segment of 32 KiB (2 pieces, 1024 ns of wire) each way.
    // Reduce-scatter step 0: send + recv + 2 loads + combine = 10 + 50 + 1200 + 100 = 1360 a piece.
    // All-gather step 0: send + recv + 2 stores = 660 a piece. 2 a + 2 x 1360 + 2 x 660.
    expect(ringAllReduceModelNs(2, a, 32, 4 * c, pe)).toBe(200 + 2720 + 1320);
    // n = 4, S = 64 KiB: segments of one piece. RS step 0 1360 (PE), steps 1-2: 60 + 600 + 100 =
    // 760 (PE); AG step 0 660 (PE), steps 1-2: 60 + 300 = 360 < 512 (wire).
    expect(ringAllReduceModelNs(4, a, 32, 4 * c, pe)).toBe(600 + 1360 + 2 * 760 + 660 + 2 * 512);
  });

  it("reduce: the first piece through every place, then the slowest place's period", () => {
    // first place 600 + 10 = 610, a middle place 50 + 600 + 100 + 10 = 760, the root 50 + 600 +
    // 100 + 300 = 1050 a piece: the root sets the period. n = 4, S = 4 pieces:
    // 3 a + 2 (512 + 760) + 610 + 1050 + 4 x 512 + 3 (1050 - 512).
    expect(chainModelNs(4, a, 32, 4 * c, c, work)).toBe(300 + 2544 + 610 + 1050 + 2048 + 3 * 538);
  });

  it("gather: the root copies its own buffer while its queue fills, then receives and stores", () => {
    // n = 2, S = 2 pieces: copy 2 x (600 + 300) = 1800, of which 4 slots x 512 = 2048 hide all;
    // period max(512, 610 the sender, 60, 350 the root) = 610; a + S / b + (2 - 1) x 98 + 350.
    expect(gatherModelNs(2, a, 32, 2 * c, pe)).toBe(0 + 100 + 1024 + 98 + 350);
    // With one slot only 512 of the copy is hidden.
    expect(gatherModelNs(2, a, 32, 2 * c, { ...pe, queueSlots: 1 })).toBe(1800 - 512 + 100 + 1024 + 98 + 350);
  });

  it("scatter: the root's copy, then its sends; the last piece crosses one hop", () => {
    // n = 3, S = 2 pieces: copy 1800, the first load and send 610, a, 2 S / b = 2048, then
    // (2 x 2 - 1) pieces at 610 instead of 512, and the last piece's receive and store 350.
    expect(scatterModelNs(3, a, 32, 2 * c, pe)).toBe(1800 + 610 + 100 + 2048 + 3 * 98 + 350);
    expect(scatterModelNs(3, a, 32, 2 * c)).toBe(gatherModelNs(3, a, 32, 2 * c));
  });

  it("all-to-all: the own block's copy, then each step at the slower of wire and PE", () => {
    // n = 3, S = 3 pieces (a block of one piece): copy 900; step 0 (2 blocks): 2 x (10 + 50) +
    // 300 + 2 x 600 = 1620 > 1024; step 1 (1 block): 60 + 300 = 360 < 512.
    expect(ringAllToAllModelNs(3, a, 32, 3 * c, pe)).toBe(900 + 100 + 1620 + 100 + 512);
  });

  it("send / recv: the source's load, the forwarding and the destination's store", () => {
    // 2 hops, S = 2 pieces: source 610, between 60, destination 350; period 610:
    // 2 a + (512 + 60) + 610 + 350 + 1024 + (610 - 512).
    expect(p2pModelNs(2, a, 32, 2 * c, c, work)).toBe(200 + 572 + 610 + 350 + 1024 + 98);
    expect(p2pModelNs(0, a, 32, 2 * c, c, work)).toBe(0);
  });

  it("rejects a PE term that is not finite numbers >= 0, naming the field", () => {
    expect(() => chainModelNs(4, a, 32, c, c, { ...work, combineNs: Number.NaN })).toThrow(
      /chainModelNs: the PE's work per piece must be finite numbers >= 0 \(ns\), got combineNs NaN/,
    );
    expect(() => gatherModelNs(4, a, 32, c, { ...pe, work: { ...work, loadNs: -1 } })).toThrow(
      /gatherModelNs: .* got loadNs -1/,
    );
  });
});
