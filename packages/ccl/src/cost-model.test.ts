import { describe, expect, it } from "vitest";
import {
  chainModelNs,
  gatherModelNs,
  p2pModelNs,
  ringAllReduceModelNs,
  ringAllToAllModelNs,
} from "./cost-model.js";

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
