import { describe, expect, it } from "vitest";
import { gridPoints, latinHypercubePoints, randomPoints } from "./designs.js";
import { SeededRandom } from "./random.js";
import type { SweepAxis } from "./spec.js";

const values = (...list: unknown[]): SweepAxis => ({ path: "params.x", values: list });
const range = (min: number, max: number, extra: { step?: number; integer?: boolean } = {}): SweepAxis => ({
  path: "params.y",
  range: { min, max, integer: false, ...extra },
});

describe("grid", () => {
  it("gives every combination, the first axis slowest and the last fastest", () => {
    expect(gridPoints({ a: values(1, 2), b: values("x", "y", "z") })).toEqual([
      { a: 1, b: "x" },
      { a: 1, b: "y" },
      { a: 1, b: "z" },
      { a: 2, b: "x" },
      { a: 2, b: "y" },
      { a: 2, b: "z" },
    ]);
  });

  it("expands a range by its step, ends included", () => {
    expect(gridPoints({ y: range(0.1, 0.4, { step: 0.1 }) }).map((point) => point.y)).toEqual([
      0.1, 0.2, 0.3, 0.4,
    ]);
    expect(gridPoints({ y: range(256, 1024, { step: 256 }) }).map((point) => point.y)).toEqual([
      256, 512, 768, 1024,
    ]);
  });

  it("refuses a range without a step", () => {
    expect(() => gridPoints({ y: range(0, 1) })).toThrow(/needs range.step/);
  });
});

describe("seeded random", () => {
  it("is mulberry32: the first draws of seed 1 are fixed", () => {
    // The first outputs of mulberry32(1) from its author's reference code (bryc, PRNGshootout),
    // run separately: a change of the generator would move every sweep's random points.
    const random = new SeededRandom(1);
    expect(random.next() * 2 ** 32).toBe(2693262067);
    expect(random.next() * 2 ** 32).toBe(11749833);
  });

  it("permutes 0..n-1", () => {
    expect(new SeededRandom(7).permutation(10).sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });
});

describe("random design", () => {
  it("names the same points for the same seed, other points for another", () => {
    const axes = { a: values(1, 2, 3, 4), y: range(0, 100, { integer: true }) };
    expect(randomPoints(axes, 5, 3)).toEqual(randomPoints(axes, 5, 3));
    expect(randomPoints(axes, 5, 3)).not.toEqual(randomPoints(axes, 5, 4));
  });

  it("draws within the range, on the step", () => {
    for (const point of randomPoints({ y: range(10, 20, { step: 2.5 }) }, 50, 9)) {
      expect([10, 12.5, 15, 17.5, 20]).toContain(point.y);
    }
  });
});

describe("Latin hypercube", () => {
  it("uses every stratum of a range axis exactly once", () => {
    const points = latinHypercubePoints({ y: range(0, 10), z: range(-1, 1) }, 10, 42);
    const yStrata = points.map((point) => Math.floor(point.y as number)).sort((a, b) => a - b);
    expect(yStrata).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    const zStrata = points
      .map((point) => Math.floor((((point.z as number) + 1) / 2) * 10))
      .sort((a, b) => a - b);
    expect(zStrata).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it("uses each of k values count/k times on a categorical axis", () => {
    const points = latinHypercubePoints({ a: values("p", "q", "r") }, 6, 5);
    const counts = new Map<unknown, number>();
    for (const point of points) counts.set(point.a, (counts.get(point.a) ?? 0) + 1);
    expect(Object.fromEntries(counts)).toEqual({ p: 2, q: 2, r: 2 });
  });

  it("permutes the axes independently and repeatably", () => {
    const axes = { y: range(0, 4), z: range(0, 4) };
    const points = latinHypercubePoints(axes, 4, 1);
    expect(latinHypercubePoints(axes, 4, 1)).toEqual(points);
    const pairs = points.map((point) => [Math.floor(point.y as number), Math.floor(point.z as number)]);
    expect(pairs.map((pair) => pair[0]).sort()).toEqual([0, 1, 2, 3]);
    expect(pairs.map((pair) => pair[1]).sort()).toEqual([0, 1, 2, 3]);
  });
});
