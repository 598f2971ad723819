// Helpers shared by the GEMM tests: seeded inputs and an f64 reference with an error bound.
import type { GemmOptions } from "./sgemm.js";

/** `length` values uniform in [-1, 1), from a seeded generator (mulberry32). */
export function randomFloat32(length: number, seed: number): Float32Array {
  const values = new Float32Array(length);
  let state = seed >>> 0;
  for (let i = 0; i < length; i++) {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    values[i] = ((t ^ (t >>> 14)) >>> 0) / 2 ** 31 - 1;
  }
  return values;
}

/**
 * C = op(A) @ op(B) [+ C] by the triple loop in f64, with a bound on the error of any f32
 * summation order: (k + 2) * 2^-23 * sum |a b| (+ 2^-23 |c| when accumulating), twice the usual
 * first-order bound.
 */
export function referenceGemm(
  m: number,
  n: number,
  k: number,
  a: Float32Array,
  lda: number,
  b: Float32Array,
  ldb: number,
  c: Float32Array,
  ldc: number,
  options: GemmOptions,
): { value: Float64Array; tolerance: Float64Array } {
  const value = new Float64Array(Math.max(0, (m - 1) * ldc + n));
  const tolerance = new Float64Array(value.length);
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < n; j++) {
      let sum = 0;
      let sumAbs = 0;
      for (let p = 0; p < k; p++) {
        const x = (options.transA === true ? a[p * lda + i] : a[i * lda + p]) as number;
        const y = (options.transB === true ? b[j * ldb + p] : b[p * ldb + j]) as number;
        sum += x * y;
        sumAbs += Math.abs(x * y);
      }
      const old = options.accumulate === true ? (c[i * ldc + j] as number) : 0;
      value[i * ldc + j] = sum + old;
      tolerance[i * ldc + j] = (k + 2) * 2 ** -23 * sumAbs + 2 ** -23 * Math.abs(old) + 1e-30;
    }
  }
  return { value, tolerance };
}

/**
 * The first index where `actual` and `expected` differ bit for bit (and the lengths agree), or
 * -1; much faster than `toEqual` on large arrays.
 */
export function firstBitDifference(actual: Float32Array, expected: Float32Array): number {
  if (actual.length !== expected.length) return Math.min(actual.length, expected.length);
  const x = new Uint32Array(actual.buffer, actual.byteOffset, actual.length);
  const y = new Uint32Array(expected.buffer, expected.byteOffset, expected.length);
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return i;
  return -1;
}
