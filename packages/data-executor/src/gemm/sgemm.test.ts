import { describe, expect, it } from "vitest";
import { type GemmOptions, sgemm } from "./index.js";
import { randomFloat32, referenceGemm } from "./test-support.js";

interface Case {
  m: number;
  n: number;
  k: number;
  /** Extra elements at the end of every row of A, B and C (leading dimension = row length + pad). */
  pad?: number;
}

function runCase({ m, n, k, pad = 0 }: Case, options: GemmOptions, seed: number) {
  const transA = options.transA === true;
  const transB = options.transB === true;
  const lda = (transA ? m : k) + pad;
  const ldb = (transB ? k : n) + pad;
  const ldc = n + pad;
  const a = randomFloat32(Math.max(1, (transA ? k : m) * lda), seed);
  const b = randomFloat32(Math.max(1, (transB ? n : k) * ldb), seed + 1);
  const c = randomFloat32(Math.max(1, m * ldc), seed + 2);
  const before = c.slice();
  const reference = referenceGemm(m, n, k, a, lda, b, ldb, before, ldc, options);
  sgemm(m, n, k, a, lda, b, ldb, c, ldc, options);
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < ldc; j++) {
      const index = i * ldc + j;
      if (j >= n) {
        // Padding between rows of C is left alone.
        if (c[index] !== before[index]) expect.fail(`pad element ${index} changed`);
        continue;
      }
      const error = Math.abs((c[index] as number) - (reference.value[index] as number));
      if (!(error <= reference.tolerance[index]!)) {
        expect.fail(
          `${m}x${n}x${k} ${JSON.stringify(options)} pad ${pad}: C(${i}, ${j}) = ${c[index]}, expected ${reference.value[index]} within ${reference.tolerance[index]}`,
        );
      }
    }
  }
}

const OPTION_SETS: GemmOptions[] = [];
for (const transA of [false, true])
  for (const transB of [false, true])
    for (const accumulate of [false, true]) OPTION_SETS.push({ transA, transB, accumulate });

describe("sgemm", () => {
  // Sizes around the micro-tile (2 x 16), the blocks (MC = 128 rows, KC = 256 deep) and primes.
  const shapes: Case[] = [
    { m: 1, n: 1, k: 1 },
    { m: 1, n: 1, k: 7 },
    { m: 2, n: 16, k: 1 },
    { m: 3, n: 17, k: 5 },
    { m: 7, n: 13, k: 11 },
    { m: 16, n: 2, k: 3 },
    { m: 31, n: 33, k: 32 },
    { m: 32, n: 32, k: 32 },
    { m: 33, n: 15, k: 29 },
    { m: 64, n: 48, k: 64, pad: 5 },
    { m: 97, n: 101, k: 103, pad: 1 },
    { m: 129, n: 31, k: 257 },
    { m: 130, n: 47, k: 300, pad: 3 },
    { m: 5, n: 200, k: 513 },
    { m: 257, n: 17, k: 2 },
  ];
  for (const shape of shapes) {
    it(`matches an f64 triple loop at ${shape.m} x ${shape.n} x ${shape.k}${shape.pad ? ` (rows padded by ${shape.pad})` : ""}, all transposes, with and without accumulate`, () => {
      OPTION_SETS.forEach((options, index) => {
        runCase(shape, options, 17 * shape.m + 31 * shape.n + shape.k + 101 * index);
      });
    });
  }

  it("matches at 2 x 2065 x 3 (more columns than one B block of 2048)", () => {
    runCase({ m: 2, n: 2065, k: 3 }, {}, 5);
    runCase({ m: 3, n: 2049, k: 2 }, { transB: true, accumulate: true }, 6);
  });

  it("matches at 256 x 256 x 256 and 200 x 300 x 520", () => {
    runCase({ m: 256, n: 256, k: 256 }, {}, 7);
    runCase({ m: 200, n: 300, k: 520 }, { transA: true, transB: true }, 8);
  });

  it("is bit-identical to f32 sums in k order in slices of 256 (no fused multiply-add)", () => {
    const m = 5;
    const n = 19;
    const k = 600;
    const a = randomFloat32(m * k, 1);
    const b = randomFloat32(k * n, 2);
    for (const accumulate of [false, true]) {
      const c = randomFloat32(m * n, 3);
      const expected = c.slice();
      for (let i = 0; i < m; i++) {
        for (let j = 0; j < n; j++) {
          let sum = accumulate ? (expected[i * n + j] as number) : 0;
          for (let start = 0; start < k; start += 256) {
            let slice = 0;
            for (let p = start; p < Math.min(k, start + 256); p++) {
              slice = Math.fround(slice + Math.fround((a[i * k + p] as number) * (b[p * n + j] as number)));
            }
            sum = start === 0 && !accumulate ? slice : Math.fround(sum + slice);
          }
          expected[i * n + j] = sum;
        }
      }
      sgemm(m, n, k, a, k, b, n, c, n, { accumulate });
      expect(c).toEqual(expected);
    }
  });

  it("overwrites C (NaN included) unless accumulating; k = 0 gives zeros or leaves C", () => {
    const a = new Float32Array([1, 2, 3, 4]);
    const b = new Float32Array([1, 0, 0, 1]);
    const c = new Float32Array([Number.NaN, Number.NaN, Number.NaN, Number.NaN]);
    sgemm(2, 2, 2, a, 2, b, 2, c, 2);
    expect(c).toEqual(new Float32Array([1, 2, 3, 4]));
    sgemm(2, 2, 2, a, 2, b, 2, c, 2, { accumulate: true });
    expect(c).toEqual(new Float32Array([2, 4, 6, 8]));
    sgemm(2, 2, 0, new Float32Array(0), 1, new Float32Array(0), 2, c, 2, { accumulate: true });
    expect(c).toEqual(new Float32Array([2, 4, 6, 8]));
    sgemm(2, 2, 0, new Float32Array(0), 1, new Float32Array(0), 2, c, 2);
    expect(c).toEqual(new Float32Array(4));
  });

  it("does nothing for m = 0 or n = 0", () => {
    const c = new Float32Array([5]);
    sgemm(0, 1, 3, new Float32Array(0), 3, new Float32Array(3), 1, c, 1);
    sgemm(1, 0, 3, new Float32Array(3), 3, new Float32Array(0), 1, c, 1);
    expect(c).toEqual(new Float32Array([5]));
  });

  it("reads A and B in full before writing C, so C may be A", () => {
    const x = new Float32Array([1, 2, 3, 4]);
    sgemm(2, 2, 2, x, 2, new Float32Array([0, 1, 1, 0]), 2, x, 2);
    expect(x).toEqual(new Float32Array([2, 1, 4, 3]));
  });

  it("works on subarrays (views with a byte offset)", () => {
    const storage = randomFloat32(1000, 9);
    const a = storage.subarray(3, 3 + 6 * 5);
    const b = storage.subarray(101, 101 + 5 * 7);
    const c = new Float32Array(200).subarray(17, 17 + 6 * 7);
    sgemm(6, 7, 5, a, 5, b, 7, c, 7);
    const reference = referenceGemm(6, 7, 5, a, 5, b, 7, new Float32Array(42), 7, {});
    c.forEach((value, index) => {
      expect(Math.abs(value - reference.value[index]!)).toBeLessThanOrEqual(reference.tolerance[index]!);
    });
  });

  it("rejects bad sizes, leading dimensions and short arrays with TENSOR_INVALID", () => {
    const x = new Float32Array(16);
    expect(() => sgemm(-1, 2, 2, x, 2, x, 2, x, 2)).toThrow(
      /\[TENSOR_INVALID\] sgemm: m must be an integer >= 0/,
    );
    expect(() => sgemm(2, 2, 1.5, x, 2, x, 2, x, 2)).toThrow(/k must be an integer >= 0, got 1.5/);
    expect(() => sgemm(2, 3, 4, x, 3, x, 3, x, 3)).toThrow(
      /lda is 3, expected an integer >= 4: A is stored m x k = 2 x 4/,
    );
    expect(() => sgemm(2, 3, 4, x, 4, x, 3, x, 3, { transB: true })).toThrow(
      /ldb is 3, expected an integer >= 4: B is stored n x k \(transB\) = 3 x 4/,
    );
    expect(() => sgemm(4, 4, 4, x, 4, x, 4, new Float32Array(15), 4)).toThrow(
      /C has 15 elements, expected at least 16 for 4 x 4 with ldc = 4/,
    );
  });
});
