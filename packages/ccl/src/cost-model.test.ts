import { describe, expect, it } from "vitest";
import { ringAllReduceModelNs } from "./cost-model.js";

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
