/**
 * Host reference implementations of the workload benches: plain loops over the inputs' exact
 * values in double precision, each result rounded once to the output dtype (`Tensor.fromArray`
 * rounds to nearest, ties to even). Deliberately independent of the simulator's code: these are
 * what the kernels' outputs are checked against.
 */
import { type Dtype, roundToDtype, Tensor } from "@kb/tensor";

/** `C = A @ B` for `A` `[M, K]` and `B` `[K, N]`, accumulated in f64, rounded once to `dtype`. */
export function matmul(a: Tensor, b: Tensor, dtype: Dtype): Tensor {
  const [m, k] = dims2(a, "matmul A");
  const [k2, n] = dims2(b, "matmul B");
  if (k !== k2) throw new RangeError(`matmul: inner dimensions differ (${k} and ${k2}).`);
  const av = a.toFloat64Array();
  const bv = b.toFloat64Array();
  const out = new Float64Array(m * n);
  for (let i = 0; i < m; i++) {
    const row = i * n;
    for (let p = 0; p < k; p++) {
      const x = av[i * k + p] as number;
      if (x === 0) continue;
      const bRow = p * n;
      for (let j = 0; j < n; j++) out[row + j] = (out[row + j] as number) + x * (bv[bRow + j] as number);
    }
  }
  return Tensor.fromArray(out, [m, n], dtype);
}

/** `x + y` elementwise (same shapes), rounded to `dtype`. */
export function add(x: Tensor, y: Tensor, dtype: Dtype): Tensor {
  sameShape(x, y, "add");
  const xv = x.toFloat64Array();
  const yv = y.toFloat64Array();
  const out = new Float64Array(xv.length);
  for (let i = 0; i < out.length; i++) out[i] = (xv[i] as number) + (yv[i] as number);
  return Tensor.fromArray(out, x.shape, dtype);
}

/** `exp(x)` elementwise, rounded to `dtype`. */
export function exp(x: Tensor, dtype: Dtype): Tensor {
  const xv = x.toFloat64Array();
  const out = new Float64Array(xv.length);
  for (let i = 0; i < out.length; i++) out[i] = Math.exp(xv[i] as number);
  return Tensor.fromArray(out, x.shape, dtype);
}

/** The sum of each row of `x` `[rows, cols]`, as `[rows, 1]`, summed in f64 and rounded once. */
export function rowSum(x: Tensor, dtype: Dtype): Tensor {
  const [rows, cols] = dims2(x, "rowSum");
  const xv = x.toFloat64Array();
  const out = new Float64Array(rows);
  for (let r = 0; r < rows; r++) {
    let sum = 0;
    for (let c = 0; c < cols; c++) sum += xv[r * cols + c] as number;
    out[r] = sum;
  }
  return Tensor.fromArray(out, [rows, 1], dtype);
}

/** Softmax of each row of `x` `[rows, cols]` (the row max subtracted first), rounded to `dtype`. */
export function softmax(x: Tensor, dtype: Dtype): Tensor {
  const [rows, cols] = dims2(x, "softmax");
  const out = x.toFloat64Array();
  for (let r = 0; r < rows; r++) softmaxRow(out, r * cols, cols);
  return Tensor.fromArray(out, [rows, cols], dtype);
}

/**
 * `O = softmax(Q K^T * scale) V` for `Q` `[Sq, D]`, `K` and `V` `[S, D]`, rounded where the
 * attention kernel rounds: the scores and their scaled values are f32 (PE_GEMM's accumulator and
 * PE_MATH in f32), the probabilities f32 then cast to `dtype` for the second GEMM, whose f64 sum
 * is rounded once to `dtype`.
 */
export function attention(q: Tensor, k: Tensor, v: Tensor, scale: number, dtype: Dtype): Tensor {
  const [sq, d] = dims2(q, "attention Q");
  const [s, dk] = dims2(k, "attention K");
  const [sv, dv] = dims2(v, "attention V");
  if (dk !== d || sv !== s) {
    throw new RangeError(`attention: Q [${sq}, ${d}], K [${s}, ${dk}] and V [${sv}, ${dv}] do not fit.`);
  }
  const qv = q.toFloat64Array();
  const kv = k.toFloat64Array();
  const vv = v.toFloat64Array();
  const scores = new Float64Array(s);
  const out = new Float64Array(sq * dv);
  const scaleF32 = Math.fround(scale);
  for (let i = 0; i < sq; i++) {
    for (let j = 0; j < s; j++) {
      let dot = 0;
      for (let p = 0; p < d; p++) dot += (qv[i * d + p] as number) * (kv[j * d + p] as number);
      scores[j] = Math.fround(Math.fround(dot) * scaleF32);
    }
    softmaxRow(scores, 0, s);
    for (let j = 0; j < s; j++) scores[j] = roundToDtype(Math.fround(scores[j] as number), dtype);
    for (let c = 0; c < dv; c++) {
      let sum = 0;
      for (let j = 0; j < s; j++) sum += (scores[j] as number) * (vv[j * dv + c] as number);
      out[i * dv + c] = sum;
    }
  }
  return Tensor.fromArray(out, [sq, dv], dtype);
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
  const out = x.toFloat64Array();
  const flagValues = flags.toFloat64Array();
  for (let r = 0; r < rows; r++) {
    if (!((flagValues[Math.floor(r / tileRows)] as number) > 0)) continue;
    for (let c = 0; c < cols; c++) out[r * cols + c] = Math.exp(out[r * cols + c] as number);
  }
  return Tensor.fromArray(out, [rows, cols], dtype);
}

/** Softmax in place of `values[offset .. offset + length)`. */
function softmaxRow(values: Float64Array, offset: number, length: number): void {
  let max = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < length; i++) max = Math.max(max, values[offset + i] as number);
  let sum = 0;
  for (let i = 0; i < length; i++) {
    const e = Math.exp((values[offset + i] as number) - max);
    values[offset + i] = e;
    sum += e;
  }
  for (let i = 0; i < length; i++) values[offset + i] = (values[offset + i] as number) / sum;
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
