import { describe, expect, it } from "vitest";
import { igemm } from "./index.js";

function reference(
  m: number,
  n: number,
  k: number,
  a: ArrayLike<number>,
  lda: number,
  b: ArrayLike<number>,
  ldb: number,
  c: Int32Array,
  ldc: number,
  transA: boolean,
  transB: boolean,
  accumulate: boolean,
): Int32Array {
  const result = c.slice();
  for (let i = 0; i < m; i++)
    for (let j = 0; j < n; j++) {
      let sum = accumulate ? BigInt(c[i * ldc + j]!) : 0n;
      for (let p = 0; p < k; p++) {
        const x = transA ? a[p * lda + i]! : a[i * lda + p]!;
        const y = transB ? b[j * ldb + p]! : b[p * ldb + j]!;
        sum += BigInt(x) * BigInt(y);
      }
      result[i * ldc + j] = Number(BigInt.asIntN(32, sum));
    }
  return result;
}

describe("igemm", () => {
  it("is exact for i8 and i32 inputs, all transposes, with and without accumulate", () => {
    let state = 7;
    const next = () => (state = (Math.imul(state, 1664525) + 1013904223) | 0);
    for (const [m, n, k] of [
      [1, 1, 1],
      [3, 5, 7],
      [17, 4, 33],
      [2, 9, 0],
    ] as const) {
      for (const transA of [false, true])
        for (const transB of [false, true])
          for (const accumulate of [false, true]) {
            const lda = (transA ? m : k) + 1;
            const ldb = (transB ? k : n) + 2;
            const ldc = n + 1;
            const a8 = new Int8Array((transA ? k : m) * lda).map(() => next() >> 24);
            const b8 = new Int8Array((transB ? n : k) * ldb).map(() => next() >> 24);
            const a32 = new Int32Array(a8.length).map(() => next());
            const b32 = new Int32Array(b8.length).map(() => next());
            for (const [a, b] of [
              [a8, b8],
              [a32, b32],
            ] as const) {
              const c = new Int32Array(m * ldc).map(() => next() >> 8);
              const expected = reference(m, n, k, a, lda, b, ldb, c, ldc, transA, transB, accumulate);
              igemm(m, n, k, a, lda, b, ldb, c, ldc, { transA, transB, accumulate });
              expect(c).toEqual(expected);
            }
          }
    }
  });

  it("wraps modulo 2^32 like an i32 accumulator", () => {
    const c = new Int32Array(2);
    // 65536 * 32768 = 2^31 wraps to -2^31; 2^31 + 2^31 = 2^32 wraps to 0.
    igemm(1, 1, 1, new Int32Array([65536]), 1, new Int32Array([32768]), 1, c, 1);
    expect(c[0]).toBe(-2147483648);
    igemm(1, 1, 2, new Int32Array([65536, 65536]), 2, new Int32Array([32768, 32768]), 1, c, 1);
    expect(c[0]).toBe(0);
    expect(() => igemm(2, 2, 2, new Int8Array(3), 2, new Int8Array(4), 2, c, 2)).toThrow(
      /\[TENSOR_INVALID\] igemm: A has 3 elements/,
    );
  });
});
