import { roundToDtype, Tensor } from "@kb/tensor";
import { describe, expect, test } from "vitest";
import { type MatrixView, multiplyRows, packColumns, ROW_BLOCK } from "../lib/blocked-matmul.js";
import { attention, matmul } from "../lib/reference.js";

/** Seeded values in [-1, 1) with many significant bits, so any change of summation order shows. */
function randomValues(count: number, seed: number): Float64Array {
  const values = new Float64Array(count);
  let state = seed >>> 0;
  for (let i = 0; i < count; i++) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    const high = state;
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    values[i] = ((high * 2 ** 21 + (state >>> 11)) / 2 ** 52) * 2 - 1;
  }
  return values;
}

const rowMajor = (data: Float64Array, columns: number): MatrixView => ({
  data,
  offset: 0,
  rowStride: columns,
  colStride: 1,
});

/** The naive triple loop, `c[i, j] += a[i, p] * b[p, j]` for p = 0, 1, ... in order. */
function naive(a: Float64Array, b: Float64Array, c: Float64Array, m: number, n: number, k: number): void {
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < n; j++) {
      let sum = c[i * n + j]!;
      for (let p = 0; p < k; p++) sum += a[i * k + p]! * b[p * n + j]!;
      c[i * n + j] = sum;
    }
  }
}

/** The first index where two arrays differ bit for bit (Object.is), or -1. */
function firstDifference(x: Float64Array, y: Float64Array): number {
  if (x.length !== y.length) return Math.min(x.length, y.length);
  for (let i = 0; i < x.length; i++) if (!Object.is(x[i], y[i])) return i;
  return -1;
}

// Shapes M x N x K: single elements, odd sizes below the 4 x 4 micro-tile, edges of it, and sizes
// past one block of rows (128) and of depth (256) that are multiples of neither.
const shapes: [number, number, number][] = [
  [1, 1, 1],
  [3, 5, 7],
  [4, 4, 4],
  [65, 130, 67],
  [129, 9, 257],
  [2 * ROW_BLOCK + 3, 6, 513],
];

describe("the blocked f64 matmul of the host references", () => {
  // Exact equality in f64 is the right check, not a tolerance: the kernel sums each element's
  // products in order of p like the naive loop (it blocks over rows, columns and K but never
  // reorders one element's sum, and JS has no fused multiply-add), so every rounding step is the
  // same one.
  test.each(shapes)("equals the naive triple loop bit for bit in f64: %i x %i x %i", (m, n, k) => {
    const a = randomValues(m * k, m * 7 + k);
    const b = randomValues(k * n, n * 13 + k);
    const initial = randomValues(m * n, m + n); // C += A @ B: nonzero C is kept
    const expected = initial.slice();
    naive(a, b, expected, m, n, k);
    const c = initial.slice();
    multiplyRows(rowMajor(a, k), 0, m, packColumns(rowMajor(b, n), k, n), rowMajor(c, n));
    expect(firstDifference(c, expected)).toBe(-1);
  });

  test("strided views: B read through its transpose, C rows from an offset, other rows untouched", () => {
    const [m, n, k] = [9, 11, 6];
    const a = randomValues(m * k, 1);
    const bT = randomValues(n * k, 2); // B^T [n, k] row-major: B [k, n] has strides (1, k)
    const b = new Float64Array(k * n);
    for (let p = 0; p < k; p++) for (let j = 0; j < n; j++) b[p * n + j] = bT[j * k + p]!;
    const expected = new Float64Array(m * n);
    naive(a, b, expected, m, n, k);
    const packed = packColumns({ data: bT, offset: 0, rowStride: 1, colStride: k }, k, n);
    // C inside a larger buffer: from offset 2, rows n + 3 apart; NaN where C is not.
    const c = new Float64Array(2 + m * (n + 3)).fill(Number.NaN);
    for (let i = 0; i < m; i++) c.fill(0, 2 + i * (n + 3), 2 + i * (n + 3) + n);
    const cView = { data: c, offset: 2, rowStride: n + 3, colStride: 1 };
    multiplyRows(rowMajor(a, k), 2, 7, packed, cView);
    for (let i = 0; i < m; i++) {
      for (let j = 0; j < n; j++) {
        const value = c[2 + i * (n + 3) + j];
        expect(value).toBe(i >= 2 && i < 7 ? expected[i * n + j] : 0);
      }
    }
    expect(Number.isNaN(c[0]) && Number.isNaN(c[1]) && Number.isNaN(c[2 + n])).toBe(true);
  });

  test.each(["f16", "bf16", "f32"] as const)(
    "matmul equals the naive loop rounded once to %s on 65 x 130 x 67",
    (dtype) => {
      const [m, n, k] = [65, 130, 67];
      const a = Tensor.fromArray(randomValues(m * k, 3), [m, k], dtype);
      const b = Tensor.fromArray(randomValues(k * n, 4), [k, n], dtype);
      const expected = new Float64Array(m * n);
      naive(a.toFloat64Array(), b.toFloat64Array(), expected, m, n, k);
      const c = matmul(a, b, dtype);
      expect(c.shape).toEqual([m, n]);
      expect(
        firstDifference(
          c.toFloat64Array(),
          expected.map((x) => roundToDtype(x, dtype)),
        ),
      ).toBe(-1);
    },
  );

  test("matmul reports nondecreasing fractions of its rows, ending at 1", () => {
    const [m, n, k] = [3 * ROW_BLOCK + 5, 8, 600];
    const a = Tensor.fromArray(randomValues(m * k, 5), [m, k], "f32");
    const b = Tensor.fromArray(randomValues(k * n, 6), [k, n], "f32");
    const fractions: number[] = [];
    matmul(a, b, "f32", (fraction) => fractions.push(fraction));
    // 4 blocks of rows x 3 blocks of K, then the final 1.
    expect(fractions.length).toBeGreaterThanOrEqual(12);
    expect(fractions.every((fraction, i) => fraction >= 0 && fraction >= (fractions[i - 1] ?? 0))).toBe(true);
    expect(fractions.at(-1)).toBe(1);
    expect(fractions[0]).toBeLessThan(0.2);
  });

  test("matmul with K = 0 is zeros and still reports 1", () => {
    const fractions: number[] = [];
    const c = matmul(Tensor.zeros([2, 0], "f32"), Tensor.zeros([0, 3], "f32"), "f32", (f) =>
      fractions.push(f),
    );
    expect(Array.from(c.toFloat64Array())).toEqual([0, 0, 0, 0, 0, 0]);
    expect(fractions).toEqual([1]);
  });
});

describe("attention through the blocked matmul", () => {
  /** The reference's numerics written as plain loops, one query row at a time. */
  function naiveAttention(q: Tensor, k: Tensor, v: Tensor, scale: number, dtype: "f16" | "bf16" | "f32") {
    const [sq, d] = q.shape as [number, number];
    const s = k.shape[0] as number;
    const dv = v.shape[1] as number;
    const [qd, kd, vd] = [q.toFloat64Array(), k.toFloat64Array(), v.toFloat64Array()];
    const out = new Float64Array(sq * dv);
    const scores = new Float64Array(s);
    for (let i = 0; i < sq; i++) {
      for (let j = 0; j < s; j++) {
        let dot = 0;
        for (let p = 0; p < d; p++) dot += qd[i * d + p]! * kd[j * d + p]!;
        scores[j] = Math.fround(Math.fround(dot) * Math.fround(scale));
      }
      const max = Math.max(...scores);
      let sum = 0;
      for (let j = 0; j < s; j++) {
        scores[j] = Math.exp(scores[j]! - max);
        sum += scores[j]!;
      }
      for (let j = 0; j < s; j++) scores[j] = roundToDtype(Math.fround(scores[j]! / sum), dtype);
      for (let c = 0; c < dv; c++) {
        let acc = 0;
        for (let j = 0; j < s; j++) acc += scores[j]! * vd[j * dv + c]!;
        out[i * dv + c] = roundToDtype(acc, dtype);
      }
    }
    return out;
  }

  test.each([
    [1, 1, 1, "f32"],
    [3, 7, 5, "f16"],
    [ROW_BLOCK + 2, 67, 9, "bf16"],
  ] as const)("equals plain loops bit for bit: Sq %i, S %i, D %i, %s", (sq, s, d, dtype) => {
    const q = Tensor.fromArray(randomValues(sq * d, 7), [sq, d], dtype);
    const k = Tensor.fromArray(randomValues(s * d, 8), [s, d], dtype);
    const v = Tensor.fromArray(randomValues(s * d, 9), [s, d], dtype);
    const scale = 1 / Math.sqrt(d);
    const fractions: number[] = [];
    const o = attention(q, k, v, scale, dtype, (fraction) => fractions.push(fraction));
    expect(o.shape).toEqual([sq, d]);
    expect(firstDifference(o.toFloat64Array(), naiveAttention(q, k, v, scale, dtype))).toBe(-1);
    expect(fractions.every((fraction, i) => fraction >= (fractions[i - 1] ?? 0))).toBe(true);
    expect(fractions.at(-1)).toBe(1);
  });
});
