import { KbError } from "@kb/errors";
import { GEMM_ACCUMULATE, GEMM_TRANS_A, GEMM_TRANS_B, GemmEngine } from "./kernel.js";

/** Options of {@link sgemm}, {@link igemm} and the GEMMs of a {@link GemmPool} (all default false). */
export interface GemmOptions {
  /** A is stored k x m (row-major, leading dimension `lda`) and used transposed. */
  readonly transA?: boolean;
  /** B is stored n x k (row-major, leading dimension `ldb`) and used transposed. */
  readonly transB?: boolean;
  /** Add the product to C instead of overwriting C. */
  readonly accumulate?: boolean;
}

/** Elements a `rows` x `cols` row-major matrix with leading dimension `ld` spans; 0 when empty. */
export function matrixSpan(rows: number, cols: number, ld: number): number {
  return rows === 0 || cols === 0 ? 0 : (rows - 1) * ld + cols;
}

function isCount(value: number): boolean {
  return Number.isSafeInteger(value) && value >= 0;
}

/**
 * Checks the arguments of a GEMM C (m x n) = op(A) (m x k) @ op(B) (k x n): non-negative integer
 * sizes, leading dimensions at least the stored row lengths (BLAS rules: `lda` >= k, or m when
 * transA; `ldb` >= n, or k when transB; `ldc` >= n; all >= 1), and arrays long enough for the
 * matrices they hold. Throws a `TENSOR_INVALID` KbError naming `operation` and what is wrong.
 */
export function checkGemmArguments(
  operation: string,
  m: number,
  n: number,
  k: number,
  aLength: number,
  lda: number,
  bLength: number,
  ldb: number,
  cLength: number,
  ldc: number,
  options: GemmOptions,
): void {
  const fail = (detail: string): never => {
    throw new KbError("TENSOR_INVALID", `${operation}: ${detail}`);
  };
  for (const [name, value] of [
    ["m", m],
    ["n", n],
    ["k", k],
  ] as const) {
    if (!isCount(value)) fail(`${name} must be an integer >= 0, got ${value}.`);
  }
  const transA = options.transA === true;
  const transB = options.transB === true;
  const matrices = [
    ["A", "lda", aLength, lda, transA ? k : m, transA ? m : k, transA ? "k x m (transA)" : "m x k"],
    ["B", "ldb", bLength, ldb, transB ? n : k, transB ? k : n, transB ? "n x k (transB)" : "k x n"],
    ["C", "ldc", cLength, ldc, m, n, "m x n"],
  ] as const;
  for (const [matrix, ldName, length, ld, rows, cols, stored] of matrices) {
    if (!isCount(ld) || ld < Math.max(1, cols)) {
      fail(
        `${ldName} is ${ld}, expected an integer >= ${Math.max(1, cols)}: ${matrix} is stored ${stored} = ${rows} x ${cols}, row-major, and ${ldName} is its row stride in elements.`,
      );
    }
    // A and B are not read when k = 0 (C becomes 0, or stays as it is when accumulating).
    const span = matrix !== "C" && k === 0 ? 0 : matrixSpan(rows, cols, ld);
    if (length < span) {
      fail(
        `${matrix} has ${length} elements, expected at least ${span} for ${rows} x ${cols} with ${ldName} = ${ld} ((rows - 1) * ${ldName} + cols).`,
      );
    }
  }
}

/** One GEMM with its arrays, in the kernel's terms. */
export interface GemmCall {
  readonly m: number;
  readonly n: number;
  readonly k: number;
  readonly a: Float32Array;
  readonly lda: number;
  readonly b: Float32Array;
  readonly ldb: number;
  readonly c: Float32Array;
  readonly ldc: number;
  /** Sum of GEMM_TRANS_A, GEMM_TRANS_B, GEMM_ACCUMULATE. */
  readonly flags: number;
}

/** The kernel flags of `options`. */
export function gemmFlags(options: GemmOptions): number {
  return (
    (options.transA === true ? GEMM_TRANS_A : 0) |
    (options.transB === true ? GEMM_TRANS_B : 0) |
    (options.accumulate === true ? GEMM_ACCUMULATE : 0)
  );
}

/** Where a {@link GemmCall}'s operands sit in kernel memory (byte offsets) and how many elements. */
export interface GemmPlacement {
  readonly a: number;
  readonly aSpan: number;
  readonly b: number;
  readonly bSpan: number;
  readonly c: number;
  readonly cSpan: number;
  /** First byte after C, 16-byte aligned. */
  readonly end: number;
}

function align16(bytes: number): number {
  return Math.ceil(bytes / 16) * 16;
}

/** Places `call`'s operands from byte `at` on (16-byte aligned). */
export function placeGemm(call: GemmCall, at: number): GemmPlacement {
  const { m, n, k, flags } = call;
  const empty = m === 0 || n === 0;
  const aSpan =
    empty || k === 0
      ? 0
      : (flags & GEMM_TRANS_A) !== 0
        ? matrixSpan(k, m, call.lda)
        : matrixSpan(m, k, call.lda);
  const bSpan =
    empty || k === 0
      ? 0
      : (flags & GEMM_TRANS_B) !== 0
        ? matrixSpan(n, k, call.ldb)
        : matrixSpan(k, n, call.ldb);
  const cSpan = empty ? 0 : matrixSpan(m, n, call.ldc);
  const a = align16(at);
  const b = align16(a + 4 * aSpan);
  const c = align16(b + 4 * bSpan);
  return { a, aSpan, b, bSpan, c, cSpan, end: align16(c + 4 * cSpan) };
}

/**
 * Copies `call`'s inputs into kernel memory `f32` at `place`. C goes in too when the kernel reads
 * it (accumulate) or when C's rows have gaps (ldc > n), so that copying the whole span back out
 * leaves the gaps as they were.
 */
export function copyGemmIn(f32: Float32Array, call: GemmCall, place: GemmPlacement): void {
  if (place.aSpan > 0) f32.set(call.a.subarray(0, place.aSpan), place.a >>> 2);
  if (place.bSpan > 0) f32.set(call.b.subarray(0, place.bSpan), place.b >>> 2);
  if (place.cSpan > 0 && ((call.flags & GEMM_ACCUMULATE) !== 0 || call.ldc !== call.n)) {
    f32.set(call.c.subarray(0, place.cSpan), place.c >>> 2);
  }
}

/** Copies `call`'s result from kernel memory `f32` at `place` into `call.c`. */
export function copyGemmOut(f32: Float32Array, call: GemmCall, place: GemmPlacement): void {
  if (place.cSpan > 0) call.c.set(f32.subarray(place.c >>> 2, (place.c >>> 2) + place.cSpan));
}

let defaultEngine: GemmEngine | undefined;

/**
 * C (m x n) = op(A) (m x k) @ op(B) (k x n) [+ C when `accumulate`], all f32, row-major with
 * leading dimensions (row strides, in elements) `lda`, `ldb`, `ldc`.
 *
 * `transA`: A is stored k x m and used transposed; `transB`: B is stored n x k. Any sizes, 0
 * included (k = 0 makes C zero, or leaves it as it is when accumulating). C may alias A or B: the
 * inputs are read in full before C is written.
 *
 * Runs on the calling thread in the WebAssembly SIMD kernel of kernel.wat (2 x 16 register tiles,
 * packed panels; about 50 GFLOP/s per thread on the reference machine, see the README). Each
 * C(i, j) is summed in f32 in k order, in slices of 256 (the kernel's KC) added to C one after the
 * other, without fused multiply-add: results are bit-identical on every machine.
 *
 * **Gotchas**: the operands are copied into the kernel's own memory for the call (a memcpy each
 * way, small beside the arithmetic from about 32 x 32 x 32 up); that memory stays at the largest
 * call's size (A + B + C + 2.1 MiB). Throws a `TENSOR_INVALID` KbError for bad sizes, leading
 * dimensions or arrays too short.
 */
export function sgemm(
  m: number,
  n: number,
  k: number,
  a: Float32Array,
  lda: number,
  b: Float32Array,
  ldb: number,
  c: Float32Array,
  ldc: number,
  options: GemmOptions = {},
): void {
  checkGemmArguments("sgemm", m, n, k, a.length, lda, b.length, ldb, c.length, ldc, options);
  if (m === 0 || n === 0) return;
  defaultEngine ??= new GemmEngine(1);
  runGemmCall(defaultEngine, { m, n, k, a, lda, b, ldb, c, ldc, flags: gemmFlags(options) });
}

/** Runs one checked GEMM in `engine` on the calling thread, in workspace 0. */
export function runGemmCall(engine: GemmEngine, call: GemmCall): void {
  const place = placeGemm(call, engine.operandBase);
  engine.reserve(place.end);
  const f32 = engine.f32;
  copyGemmIn(f32, call, place);
  engine.kernel.gemm(
    call.m,
    call.n,
    call.k,
    place.a,
    call.lda,
    place.b,
    call.ldb,
    place.c,
    call.ldc,
    call.flags,
    engine.workspace(0),
  );
  copyGemmOut(f32, call, place);
}
