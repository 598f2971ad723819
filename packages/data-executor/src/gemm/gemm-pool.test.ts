import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GemmPool, type GemmPool as GemmPoolType, type GemmProblem } from "./gemm-pool.js";
import { sgemm } from "./index.js";
import { firstBitDifference, randomFloat32 } from "./test-support.js";

/** A batch that mixes shapes, transposes, padding and accumulate, with its sgemm results. */
function mixedBatch(seed: number): { problems: GemmProblem[]; expected: Float32Array[] } {
  const specs = [
    { m: 300, n: 200, k: 310 },
    { m: 1, n: 1, k: 1 },
    { m: 33, n: 17, k: 5, transA: true, accumulate: true },
    { m: 64, n: 64, k: 64, transB: true, pad: 3 },
    { m: 7, n: 2050, k: 3 },
    { m: 0, n: 4, k: 4 },
    { m: 129, n: 31, k: 0, accumulate: false },
    { m: 257, n: 130, k: 257, transA: true, transB: true, accumulate: true, pad: 1 },
  ];
  const problems: GemmProblem[] = [];
  const expected: Float32Array[] = [];
  specs.forEach((spec, index) => {
    const { m, n, k, pad = 0 } = spec;
    const transA = spec.transA === true;
    const transB = spec.transB === true;
    const lda = Math.max(1, transA ? m : k) + pad;
    const ldb = Math.max(1, transB ? k : n) + pad;
    const ldc = Math.max(1, n) + pad;
    const a = randomFloat32((transA ? k : m) * lda, seed + 3 * index);
    const b = randomFloat32((transB ? n : k) * ldb, seed + 3 * index + 1);
    const c = randomFloat32(m * ldc, seed + 3 * index + 2);
    const reference = c.slice();
    const options = { transA, transB, accumulate: spec.accumulate === true };
    sgemm(m, n, k, a, lda, b, ldb, reference, ldc, options);
    problems.push({ m, n, k, a, lda, b, ldb, c, ldc, ...options });
    expected.push(reference);
  });
  return { problems, expected };
}

function expectSameAsSgemm(pool: GemmPoolType, seed: number): void {
  const { problems, expected } = mixedBatch(seed);
  pool.batch(problems);
  problems.forEach((problem, index) => {
    expect(firstBitDifference(problem.c, expected[index]!), `problem ${index}`).toBe(-1);
  });
}

describe("GemmPool in-thread (the threads' shares run one after the other on the caller)", () => {
  it("gives sgemm's results bit for bit, however the batch is split", async () => {
    for (const threads of [1, 2, 3, 5]) {
      const pool = await GemmPool.create(threads, { inThread: true, minSplitFlops: 0 });
      expectSameAsSgemm(pool, 10 * threads);
      expect(pool.lastPlan.filter((slices) => slices.length > 0)).toHaveLength(threads);
      await pool.close();
    }
  });

  it("splits one large GEMM by rows and keeps small batches on the calling thread", async () => {
    const pool = await GemmPool.create(2, { inThread: true });
    const a = randomFloat32(256 * 256, 1);
    const c = new Float32Array(256 * 256);
    pool.sgemm(256, 256, 256, a, 256, a, 256, c, 256);
    expect(pool.lastPlan).toEqual([
      [{ problem: 0, rowStart: 0, rowEnd: 128 }],
      [{ problem: 0, rowStart: 128, rowEnd: 256 }],
    ]);
    const expected = new Float32Array(256 * 256);
    sgemm(256, 256, 256, a, 256, a, 256, expected, 256);
    expect(firstBitDifference(c, expected)).toBe(-1);
    pool.sgemm(64, 64, 64, a, 64, a, 64, c, 64);
    expect(pool.lastPlan[1]).toEqual([]);
    await pool.close();
  });

  it("checks every problem before computing any, and refuses work once closed", async () => {
    const pool = await GemmPool.create(2, { inThread: true });
    const c = new Float32Array(4).fill(9);
    expect(() =>
      pool.batch([
        { m: 2, n: 2, k: 2, a: new Float32Array(4), b: new Float32Array(4), c },
        { m: 2, n: 2, k: 2, a: new Float32Array(3), b: new Float32Array(4), c: new Float32Array(4) },
      ]),
    ).toThrow(/\[TENSOR_INVALID\] GemmPool.batch, problem 1: A has 3 elements/);
    expect(c).toEqual(new Float32Array(4).fill(9));
    await pool.close();
    expect(() => pool.batch([])).toThrow(/GemmPool: the pool was closed/);
  });

  it("rejects a bad thread count", async () => {
    await expect(GemmPool.create(0)).rejects.toThrow(
      /\[RUNTIME_INVALID\] GemmPool.create: threads must be an integer from 1 to 256, got 0/,
    );
  });
});

// Real worker threads, when this environment can start them (the worker is an eval'd script, so
// it needs no built file; under vitest it normally starts). If it cannot, these tests are skipped
// and the in-thread tests above still cover the plan and the task tables.
let pool: GemmPoolType | null = null;
beforeAll(async () => {
  try {
    pool = await GemmPool.create(2, { minSplitFlops: 0 });
  } catch {
    pool = null;
  }
});
afterAll(async () => {
  await pool?.close();
});

describe("GemmPool with a worker thread", () => {
  it("starts a worker under vitest", () => {
    expect(pool, "GemmPool.create(2) failed: worker threads cannot start here").not.toBeNull();
  });

  it("gives sgemm's results bit for bit, batch after batch", (context) => {
    if (pool === null) return context.skip();
    for (let round = 0; round < 3; round++) {
      expectSameAsSgemm(pool, 100 + round);
      expect(pool.lastPlan[1]!.length).toBeGreaterThan(0);
    }
  });

  it("grows the shared memory between batches (the worker sees the new size)", (context) => {
    if (pool === null) return context.skip();
    const n = 1100;
    const a = randomFloat32(n * n, 5);
    const c = new Float32Array(n * n);
    pool.sgemm(n, n, 8, a, 8, a, n, c, n);
    const expected = new Float32Array(n * n);
    sgemm(n, n, 8, a, 8, a, n, expected, n);
    expect(firstBitDifference(c, expected)).toBe(-1);
  });
});
