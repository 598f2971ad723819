import { describe, expect, it } from "vitest";
import { type GemmShape, splitGemmRows } from "./index.js";

function coverage(shapes: readonly GemmShape[], threads: number, minSplitFlops = 0) {
  const plan = splitGemmRows(shapes, threads, minSplitFlops);
  expect(plan).toHaveLength(threads);
  // Every row of every GEMM with work in exactly one slice, slices in row order.
  shapes.forEach((shape, problem) => {
    const slices = plan.flat().filter((slice) => slice.problem === problem);
    let row = 0;
    for (const slice of slices) {
      expect(slice.rowStart).toBe(row);
      expect(slice.rowEnd).toBeGreaterThan(slice.rowStart);
      row = slice.rowEnd;
    }
    expect(row).toBe(shape.m === 0 || shape.n === 0 ? 0 : shape.m);
  });
  const work = plan.map((slices) =>
    slices.reduce((sum, slice) => {
      const shape = shapes[slice.problem]!;
      return sum + (slice.rowEnd - slice.rowStart) * shape.n * (2 * shape.k + 1);
    }, 0),
  );
  return { plan, work };
}

describe("splitGemmRows", () => {
  it("splits one big GEMM by rows into equal even-row halves", () => {
    const { plan } = coverage([{ m: 1024, n: 1024, k: 1024 }], 2);
    expect(plan).toEqual([
      [{ problem: 0, rowStart: 0, rowEnd: 512 }],
      [{ problem: 0, rowStart: 512, rowEnd: 1024 }],
    ]);
  });

  it("gives whole GEMMs to each thread for a batch of equal ones", () => {
    const shapes = Array.from({ length: 8 }, () => ({ m: 64, n: 64, k: 64 }));
    const { plan } = coverage(shapes, 2);
    expect(plan.map((slices) => slices.map((slice) => slice.problem))).toEqual([
      [0, 1, 2, 3],
      [4, 5, 6, 7],
    ]);
    expect(plan.flat().every((slice) => slice.rowStart === 0 && slice.rowEnd === 64)).toBe(true);
  });

  it("balances odd batches, mixed sizes and more threads than rows", () => {
    for (const [shapes, threads] of [
      [
        [
          { m: 100, n: 50, k: 70 },
          { m: 3, n: 3, k: 3 },
          { m: 511, n: 7, k: 300 },
        ],
        3,
      ],
      [Array.from({ length: 3 }, () => ({ m: 256, n: 256, k: 256 })), 2],
      [[{ m: 3, n: 1000, k: 1000 }], 8],
      [
        [
          { m: 0, n: 5, k: 5 },
          { m: 5, n: 0, k: 5 },
          { m: 64, n: 64, k: 0 },
          { m: 99, n: 64, k: 64 },
        ],
        4,
      ],
    ] as const) {
      const { work } = coverage(shapes, threads);
      const total = work.reduce((sum, value) => sum + value, 0);
      const heaviestRow = Math.max(...shapes.map((shape) => shape.n * (2 * shape.k + 1)));
      for (const share of work) expect(share).toBeLessThanOrEqual(total / threads + 2 * heaviestRow);
    }
  });

  it("keeps batches under minSplitFlops on thread 0", () => {
    const { plan } = coverage(
      [
        { m: 64, n: 64, k: 64 },
        { m: 64, n: 64, k: 64 },
      ],
      2,
      2 ** 24,
    );
    expect(plan[1]).toEqual([]);
    expect(plan[0]).toHaveLength(2);
  });
});
