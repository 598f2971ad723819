/**
 * Host reference implementations of the workload benches: what the kernels' outputs are checked
 * against. They are computed on the host by a separate implementation of their own (TypeScript,
 * and WebAssembly for the innermost loops of the matrix products) on plain float64 arrays, never
 * by the simulator's or the phase-2 executor's code path.
 *
 * Numerics: the inputs' exact values in double precision, each result rounded once to the output
 * dtype (`Tensor.fromArray` rounds to nearest, ties to even); only `attention` also rounds where
 * the attention kernel does (see there). Sums run in index order (a matrix product's element is
 * `a[i, 0] * b[0, j] + a[i, 1] * b[1, j] + ...` from 0), whatever the blocking.
 *
 * Containers: every input is copied into a row-major {@link Float64NdArray} (a `Float64Array`
 * with its shape, strides and offset) and every result is built in one. Elementwise work and the
 * reductions (row sums, softmax) walk the `data` buffers with the arrays' strides and offsets in
 * plain loops; the matrix products (`matmul`, both of `attention`'s) go through
 * `blocked-matmul.ts`, a cache- and register-blocked f64 kernel over the same buffers, strides
 * and offsets: the plain `i-p-j` loop this replaced ran at about 0.7 GMAC/s (minutes for the
 * 4096^3 reference; the kernel runs it in seconds, see benches/README.md).
 *
 * Progress: `matmul` and `attention` take an optional `onProgress(fraction)`, called with
 * nondecreasing fractions of the work done, the last one 1 (pass a bench check's
 * `context?.progress`, see `ReferenceContext` of @kb/runtime). They stay synchronous.
 *
 * Dependencies: only @kb/tensor (for the tensors in and out), so these benches run from an
 * installed `kb` (`@kb/cli` ships them) and from a copy in any folder. They used @stdlib's
 * ndarray containers and loops before; those pulled about 240 packages into every install of
 * the CLI for a container and two loops.
 */
import { DTYPE_BYTES, type Dtype, roundToDtype, Tensor } from "@kb/tensor";
import { type MatrixView, multiplyRows, packColumns, ROW_BLOCK } from "./blocked-matmul.js";

/**
 * `C = A @ B` for `A` `[M, K]` and `B` `[K, N]`, accumulated in f64, rounded once to `dtype`.
 * `onProgress(fraction)` is called as row blocks of C are done (nondecreasing, ending at 1).
 */
export function matmul(a: Tensor, b: Tensor, dtype: Dtype, onProgress?: (fraction: number) => void): Tensor {
  const [m, k] = dims2(a, "matmul A");
  const [k2, n] = dims2(b, "matmul B");
  if (k !== k2) throw new RangeError(`matmul: inner dimensions differ (${k} and ${k2}).`);
  const out = zeros([m, n]);
  multiplyRows(view(fromTensor(a)), 0, m, packColumns(view(fromTensor(b)), k, n), view(out), onProgress);
  onProgress?.(1);
  return toTensor(out, dtype);
}

/** `x + y` elementwise (same shapes), rounded to `dtype`. */
export function add(x: Tensor, y: Tensor, dtype: Dtype): Tensor {
  sameShape(x, y, "add");
  const out = fromTensor(x); // a copy, made over in place
  const yd = y.toFloat64Array();
  const od = out.data;
  for (let i = 0; i < od.length; i++) od[i] = od[i]! + yd[i]!;
  return toTensor(out, dtype);
}

/** `exp(x)` elementwise, rounded to `dtype`. */
export function exp(x: Tensor, dtype: Dtype): Tensor {
  const out = fromTensor(x); // a copy, made over in place
  const od = out.data;
  for (let i = 0; i < od.length; i++) od[i] = Math.exp(od[i]!);
  return toTensor(out, dtype);
}

/** The sum of each row of `x` `[rows, cols]`, as `[rows, 1]`, summed in f64 and rounded once. */
export function rowSum(x: Tensor, dtype: Dtype): Tensor {
  const [rows, cols] = dims2(x, "rowSum");
  const xv = fromTensor(x);
  const out = zeros([rows, 1]);
  const [x0, x1] = strides2(xv);
  const xd = xv.data;
  for (let r = 0; r < rows; r++) {
    let sum = 0;
    let ix = xv.offset + r * x0;
    for (let c = 0; c < cols; c++) {
      sum += xd[ix]!;
      ix += x1;
    }
    out.data[r] = sum;
  }
  return toTensor(out, dtype);
}

/** Softmax of each row of `x` `[rows, cols]` (the row max subtracted first), rounded to `dtype`. */
export function softmax(x: Tensor, dtype: Dtype): Tensor {
  const [rows, cols] = dims2(x, "softmax");
  const out = fromTensor(x); // a copy, made over in place
  const [x0, x1] = strides2(out);
  for (let r = 0; r < rows; r++) softmaxRow(out.data, out.offset + r * x0, x1, cols);
  return toTensor(out, dtype);
}

/**
 * Layer norm of each row of `x` `[rows, cols]` with weight `w` and bias `b` (`[cols]`), in f64:
 * `mean` and `var` (the mean of `(x - mean)^2`, biased) of the row in index order,
 * `rstd = 1 / sqrt(var + eps)`, `y = (x - mean) * rstd * w + b`. `y` is rounded once to `dtype`;
 * `mean` and `rstd` (`[rows]`) once to f32.
 */
export function layerNorm(
  x: Tensor,
  w: Tensor,
  b: Tensor,
  eps: number,
  dtype: Dtype,
): { y: Tensor; mean: Tensor; rstd: Tensor } {
  const [rows, cols] = dims2(x, "layerNorm");
  if (w.size !== cols || b.size !== cols) {
    throw new RangeError(`layerNorm: w ${w} and b ${b} do not fit ${cols} columns.`);
  }
  const out = fromTensor(x); // a copy, made over in place
  const [x0, x1] = strides2(out);
  const wd = w.toFloat64Array();
  const bd = b.toFloat64Array();
  const means = new Float64Array(rows);
  const rstds = new Float64Array(rows);
  const xd = out.data;
  for (let r = 0; r < rows; r++) {
    const row = out.offset + r * x0;
    let sum = 0;
    for (let c = 0; c < cols; c++) sum += xd[row + c * x1]!;
    const mean = sum / cols;
    let squares = 0;
    for (let c = 0; c < cols; c++) squares += (xd[row + c * x1]! - mean) ** 2;
    const rstd = 1 / Math.sqrt(squares / cols + eps);
    for (let c = 0; c < cols; c++) {
      const at = row + c * x1;
      xd[at] = (xd[at]! - mean) * rstd * wd[c]! + bd[c]!;
    }
    means[r] = mean;
    rstds[r] = rstd;
  }
  return {
    y: toTensor(out, dtype),
    mean: Tensor.fromArray(means, [rows], "f32"),
    rstd: Tensor.fromArray(rstds, [rows], "f32"),
  };
}

/**
 * `O = softmax(Q K^T * scale) V` for `Q` `[Sq, D]`, `K` and `V` `[S, D]`, rounded where the
 * attention kernel rounds: the scores and their scaled values are f32 (PE_GEMM's accumulator and
 * PE_MATH in f32), the probabilities f32 then cast to `dtype` for the second GEMM, whose f64 sum
 * is rounded once to `dtype`. Blocks of `ROW_BLOCK` query rows at a time (a block's scores,
 * `[ROW_BLOCK, S]` f64, are all it holds besides the inputs and O); `onProgress(fraction)` as
 * for {@link matmul}. `causal`: query row `i` sees keys `0..i` only (the others' scores are -Inf).
 */
export function attention(
  q: Tensor,
  k: Tensor,
  v: Tensor,
  scale: number,
  dtype: Dtype,
  onProgress?: (fraction: number) => void,
  causal = false,
): Tensor {
  const [sq, d] = dims2(q, "attention Q");
  const [s, dk] = dims2(k, "attention K");
  const [sv, dv] = dims2(v, "attention V");
  if (dk !== d || sv !== s) {
    throw new RangeError(`attention: Q [${sq}, ${d}], K [${s}, ${dk}] and V [${sv}, ${dv}] do not fit.`);
  }
  const qView = view(fromTensor(q));
  const kv = fromTensor(k);
  const [k0, k1] = strides2(kv);
  // K^T [D, S]: K's buffer with its strides swapped.
  const kT = packColumns({ data: kv.data, offset: kv.offset, rowStride: k1, colStride: k0 }, d, s);
  const vPacked = packColumns(view(fromTensor(v)), s, dv);
  const out = zeros([sq, dv]);
  const outView = view(out);
  const scores = zeros([Math.min(ROW_BLOCK, sq), s]); // a block's scores, then its probabilities
  const scoresView = view(scores);
  const sd = scores.data;
  const [s0, s1] = strides2(scores);
  const scaleF32 = Math.fround(scale);
  // Each row of a block costs D * S multiply-adds for its scores and S * Dv for its output.
  const scoreShare = d + dv === 0 ? 1 : d / (d + dv);
  for (let i0 = 0; i0 < sq; i0 += ROW_BLOCK) {
    const rows = Math.min(ROW_BLOCK, sq - i0);
    const report =
      onProgress === undefined
        ? undefined
        : (share: number, offset: number) => (fraction: number) =>
            onProgress((i0 + rows * (offset + share * fraction)) / sq);
    sd.fill(0);
    multiplyRows(rowsFrom(qView, i0), 0, rows, kT, scoresView, report?.(scoreShare, 0));
    for (let r = 0; r < rows; r++) {
      const row = scores.offset + r * s0;
      for (let j = 0; j < s; j++) {
        const at = row + j * s1;
        sd[at] = Math.fround(Math.fround(sd[at]!) * scaleF32);
      }
      // Causal: query row i sees keys 0..i (Q and K rows aligned at 0).
      if (causal) for (let j = i0 + r + 1; j < s; j++) sd[row + j * s1] = Number.NEGATIVE_INFINITY;
      softmaxRow(sd, row, s1, s);
      for (let j = 0; j < s; j++) {
        const at = row + j * s1;
        sd[at] = roundToDtype(Math.fround(sd[at]!), dtype);
      }
    }
    multiplyRows(scoresView, 0, rows, vPacked, rowsFrom(outView, i0), report?.(1 - scoreShare, scoreShare));
  }
  onProgress?.(1);
  return toTensor(out, dtype);
}

/**
 * Attention of every head of `q`, `k`, `v` `[Z, H, S, D]` (Triton's fused-attention
 * layout): per head, {@link attention} of its `[S, D]` slices with query row `i` seeing keys
 * `0..i` only (`causal`) or every key, the result `[Z, H, S, D]` rounded as `attention` rounds.
 * A masked-off score is -Inf before the softmax, so its probability is 0.
 */
export function attentionHeads(
  q: Tensor,
  k: Tensor,
  v: Tensor,
  scale: number,
  causal: boolean,
  dtype: Dtype,
): Tensor {
  const [z, h, s, d] = q.shape as [number, number, number, number];
  const bytes = s * d * DTYPE_BYTES[dtype];
  const out = new Uint8Array(z * h * bytes);
  const head = (t: Tensor, i: number) =>
    new Tensor([s, d], t.dtype, t.bytes.slice(i * bytes, (i + 1) * bytes));
  for (let i = 0; i < z * h; i++) {
    const o = attention(head(q, i), head(k, i), head(v, i), scale, dtype, undefined, causal);
    out.set(o.bytes, i * bytes);
  }
  return new Tensor([z, h, s, d], dtype, out);
}

/**
 * The branchy bench's output: row tile `t` of `x` (rows `[t * tileRows, (t + 1) * tileRows)`) is
 * `exp` of it where `flags[t] > 0`, else a copy; rounded to `dtype`.
 */
export function expWhereFlagged(x: Tensor, flags: Tensor, tileRows: number, dtype: Dtype): Tensor {
  const [rows, cols] = dims2(x, "expWhereFlagged");
  const tiles = Math.ceil(rows / tileRows);
  if (flags.size !== tiles) {
    throw new RangeError(`expWhereFlagged: ${flags.size} flags for ${tiles} tiles of ${tileRows} rows.`);
  }
  const out = fromTensor(x); // a copy; flagged rows are made over in place
  const flagValues = flags.toFloat64Array(); // flags of any shape, flat
  const [x0, x1] = strides2(out);
  const xd = out.data;
  for (let r = 0; r < rows; r++) {
    if (!(flagValues[Math.floor(r / tileRows)]! > 0)) continue;
    let ix = out.offset + r * x0;
    for (let c = 0; c < cols; c++) {
      xd[ix] = Math.exp(xd[ix]!);
      ix += x1;
    }
  }
  return toTensor(out, dtype);
}

/** Softmax in place of the `length` values of `data` from `offset`, `stride` apart. */
function softmaxRow(data: Float64Array, offset: number, stride: number, length: number): void {
  const end = offset + length * stride;
  let max = Number.NEGATIVE_INFINITY;
  for (let i = offset; i !== end; i += stride) max = Math.max(max, data[i]!);
  let sum = 0;
  for (let i = offset; i !== end; i += stride) {
    const e = Math.exp(data[i]! - max);
    data[i] = e;
    sum += e;
  }
  for (let i = offset; i !== end; i += stride) data[i] = data[i]! / sum;
}

/** A float64 n-dimensional array: `data[offset + i0 * strides[0] + i1 * strides[1] + ...]`. */
interface Float64NdArray {
  readonly data: Float64Array;
  readonly shape: readonly number[];
  readonly strides: readonly number[];
  readonly offset: number;
}

/** A 2-D array as the matrix kernel's view of its buffer. */
function view(x: Float64NdArray): MatrixView {
  const [rowStride, colStride] = strides2(x);
  return { data: x.data, offset: x.offset, rowStride, colStride };
}

/** `x` from its row `row` on (row `row` of `x` is row 0 of the result). */
function rowsFrom(x: MatrixView, row: number): MatrixView {
  return { ...x, offset: x.offset + row * x.rowStride };
}

/** A row-major float64 array of `shape` over `data` (not copied). */
function float64(data: Float64Array, shape: readonly number[]): Float64NdArray {
  const strides: number[] = new Array<number>(shape.length);
  let stride = 1;
  for (let i = shape.length - 1; i >= 0; i--) {
    strides[i] = stride;
    stride *= shape[i]!;
  }
  if (stride !== data.length) {
    throw new Error(`reference: ${data.length} values do not fill the shape [${shape.join(", ")}].`);
  }
  return { data, shape: shape.slice(), strides, offset: 0 };
}

/** The tensor's exact values in a new row-major float64 array of its shape. */
function fromTensor(t: Tensor): Float64NdArray {
  return float64(t.toFloat64Array(), t.shape);
}

/** A new row-major float64 array of zeros. */
function zeros(shape: readonly number[]): Float64NdArray {
  let size = 1;
  for (const dim of shape) size *= dim;
  return float64(new Float64Array(size), shape);
}

/**
 * `x` rounded once to `dtype`. `x` must be one of this file's own arrays (row-major, contiguous,
 * offset 0), whose `data` is then its elements in row-major order.
 */
function toTensor(x: Float64NdArray, dtype: Dtype): Tensor {
  if (x.offset !== 0) throw new Error("reference: expected a contiguous row-major array at offset 0.");
  return Tensor.fromArray(x.data, Array.from(x.shape), dtype);
}

/** The two strides of a 2-D array. */
function strides2(x: Float64NdArray): [number, number] {
  return [x.strides[0]!, x.strides[1]!];
}

function dims2(t: Tensor, what: string): [number, number] {
  if (t.shape.length !== 2) throw new RangeError(`${what}: expected a 2-D tensor, got ${t}.`);
  return [t.shape[0] as number, t.shape[1] as number];
}

function sameShape(x: Tensor, y: Tensor, what: string): void {
  if (x.shape.length !== y.shape.length || x.shape.some((size, i) => size !== y.shape[i])) {
    throw new RangeError(`${what}: shapes differ (${x} and ${y}).`);
  }
}
