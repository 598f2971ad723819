import { checkGemmArguments, type GemmOptions } from "./sgemm.js";

/**
 * Integer GEMM: C (m x n) = op(A) (m x k) @ op(B) (k x n) [+ C when `accumulate`] with i8 or i32
 * inputs and an i32 C, row-major with leading dimensions, like {@link sgemm}.
 *
 * Exact in 32-bit two's complement: products and sums wrap modulo 2^32 as an i32 accumulator in
 * hardware does (i8 x i8 products never wrap; a sum wraps only past 2^31, e.g. beyond 131072
 * products of -128 x -128). A plain loop on the calling thread (about 1 GOP/s): integer GEMMs
 * are rare in the replay and need exactness, not speed. Throws `TENSOR_INVALID` like `sgemm`.
 */
export function igemm(
  m: number,
  n: number,
  k: number,
  a: Int8Array | Int32Array,
  lda: number,
  b: Int8Array | Int32Array,
  ldb: number,
  c: Int32Array,
  ldc: number,
  options: GemmOptions = {},
): void {
  checkGemmArguments("igemm", m, n, k, a.length, lda, b.length, ldb, c.length, ldc, options);
  // Element strides of op(A)(i, p) and op(B)(p, j).
  const aRow = options.transA === true ? 1 : lda;
  const aColumn = options.transA === true ? lda : 1;
  const bRow = options.transB === true ? 1 : ldb;
  const bColumn = options.transB === true ? ldb : 1;
  for (let i = 0; i < m; i++) {
    const cRow = i * ldc;
    if (options.accumulate !== true) c.fill(0, cRow, cRow + n);
    for (let p = 0; p < k; p++) {
      const x = a[i * aRow + p * aColumn]!;
      if (x === 0) continue;
      const bStart = p * bRow;
      for (let j = 0; j < n; j++) c[cRow + j] = (c[cRow + j]! + Math.imul(x, b[bStart + j * bColumn]!)) | 0;
    }
  }
}
