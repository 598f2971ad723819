import { describe, expect, it } from "vitest";
import { PendingRanges } from "./pending-ranges.js";

function ranges(...pairs: [number, number][]): PendingRanges {
  const set = new PendingRanges();
  for (const [start, end] of pairs) set.add(start, end);
  return set;
}

describe("PendingRanges", () => {
  it("an empty set overlaps nothing, and empty ranges are ignored", () => {
    const set = new PendingRanges();
    expect(set.overlaps(0, 100)).toBe(false);
    set.add(10, 10);
    set.add(20, 5);
    expect(set.size).toBe(0);
    set.add(10, 20);
    expect(set.overlaps(15, 15)).toBe(false);
  });

  it("ranges are half-open: [10, 20) overlaps [19, 30) but not [20, 30) or [0, 10)", () => {
    const set = ranges([10, 20]);
    expect(set.overlaps(19, 30)).toBe(true);
    expect(set.overlaps(0, 11)).toBe(true);
    expect(set.overlaps(12, 13)).toBe(true);
    expect(set.overlaps(0, 100)).toBe(true);
    expect(set.overlaps(20, 30)).toBe(false);
    expect(set.overlaps(0, 10)).toBe(false);
  });

  it("add merges overlapping and touching ranges and keeps the rest sorted and apart", () => {
    const set = ranges([50, 60], [10, 20], [30, 40]);
    expect(set.toArray()).toEqual([
      [10, 20],
      [30, 40],
      [50, 60],
    ]);
    set.add(20, 30); // touches both neighbours: one interval
    expect(set.toArray()).toEqual([
      [10, 40],
      [50, 60],
    ]);
    set.add(35, 55);
    expect(set.toArray()).toEqual([[10, 60]]);
    set.add(0, 100);
    expect(set.toArray()).toEqual([[0, 100]]);
    expect(set.bytes).toBe(100);
  });

  it("clear trims, splits and removes, leaving untouched neighbours alone", () => {
    const set = ranges([0, 100], [200, 300]);
    set.clear(40, 60);
    expect(set.toArray()).toEqual([
      [0, 40],
      [60, 100],
      [200, 300],
    ]);
    set.clear(100, 200); // touches [60, 100) and [200, 300) without covering a byte of them
    expect(set.toArray()).toEqual([
      [0, 40],
      [60, 100],
      [200, 300],
    ]);
    set.clear(30, 250);
    expect(set.toArray()).toEqual([
      [0, 30],
      [250, 300],
    ]);
    set.clear(0, 1000);
    expect(set.size).toBe(0);
    expect(set.overlaps(0, 1000)).toBe(false);
  });

  it("agrees with a byte map over random adds, clears and queries", () => {
    // A seeded LCG: the same sequence every run.
    let seed = 12345;
    const next = (limit: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % limit;
    };
    const SIZE = 512;
    const model = new Uint8Array(SIZE);
    const set = new PendingRanges();
    for (let step = 0; step < 4000; step++) {
      const start = next(SIZE);
      const end = start + next(48);
      const action = next(3);
      if (action === 0) {
        set.add(start, end);
        model.fill(1, start, Math.min(end, SIZE));
      } else if (action === 1) {
        set.clear(start, end);
        model.fill(0, start, Math.min(end, SIZE));
      } else {
        const expected = model.subarray(start, Math.min(end, SIZE)).includes(1);
        expect(set.overlaps(start, end), `overlaps(${start}, ${end}) at step ${step}`).toBe(expected);
      }
      const intervals = set.toArray();
      for (let i = 1; i < intervals.length; i++) {
        // Sorted, disjoint and never adjacent (adjacent ranges merge).
        expect((intervals[i] as [number, number])[0]).toBeGreaterThan(
          (intervals[i - 1] as [number, number])[1],
        );
      }
    }
    expect(set.bytes).toBe(model.reduce((sum, byte) => sum + byte, 0));
  });

  it("holds many intervals: appends in order and answers queries over all of them", () => {
    const set = new PendingRanges();
    for (let i = 0; i < 100_000; i++) set.add(i * 16, i * 16 + 8);
    expect(set.size).toBe(100_000);
    let hits = 0;
    for (let i = 0; i < 200_000; i++) if (set.overlaps(i * 8, i * 8 + 4)) hits++;
    // [8k, 8k + 4) lies in a pending [16j, 16j + 8) exactly when k is even.
    expect(hits).toBe(100_000);
  });

  it("intervalAt gives the merged interval holding an address, null outside", () => {
    const set = new PendingRanges();
    set.add(10, 20);
    set.add(20, 30); // touches: one interval [10, 30)
    set.add(40, 50);
    expect(set.intervalAt(10)).toEqual([10, 30]);
    expect(set.intervalAt(29)).toEqual([10, 30]);
    expect(set.intervalAt(30)).toBeNull();
    expect(set.intervalAt(9)).toBeNull();
    expect(set.intervalAt(45)).toEqual([40, 50]);
    expect(new PendingRanges().intervalAt(0)).toBeNull();
  });
});
