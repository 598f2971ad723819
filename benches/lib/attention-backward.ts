import { type Dtype, Tensor } from "@kb/tensor";

/** The gradients of attention with respect to its inputs, each `[Z, H, S, D]` like them. */
export interface AttentionGradients {
  readonly dq: Tensor;
  readonly dk: Tensor;
  readonly dv: Tensor;
}

/**
 * The host reference of attention's backward pass (Triton's tutorial 06 backward): for every head
 * of `q`, `k`, `v`, `dout` `[Z, H, S, D]`, with `P = softmax(q k^T * scale)` (query row `i` seeing
 * keys `0..i` only when `causal`) and `O = P v`:
 * `dv = P^T dout`, `dP = dout v^T`, `Delta_i = sum_j dout[i, j] O[i, j]`,
 * `dS = P * (dP - Delta[:, None])`, `dq = dS k * scale`, `dk = dS^T q * scale`. Everything in f64
 * from the inputs' exact values, sums in index order, each gradient rounded once to `dtype`.
 * A separate implementation (plain loops), not the kernels' algorithm: no online softmax, no
 * base-2 logarithms, no pre-scaled K.
 */
export function attentionBackwardHeads(
  q: Tensor,
  k: Tensor,
  v: Tensor,
  dout: Tensor,
  scale: number,
  causal: boolean,
  dtype: Dtype,
): AttentionGradients {
  const [z, h, s, d] = q.shape as [number, number, number, number];
  const [Q, K, V, DO] = [q, k, v, dout].map((t) => t.toFloat64Array()) as [
    Float64Array,
    Float64Array,
    Float64Array,
    Float64Array,
  ];
  const dq = new Float64Array(Q.length);
  const dk = new Float64Array(Q.length);
  const dv = new Float64Array(Q.length);
  const p = new Float64Array(s * s);
  const delta = new Float64Array(s);
  for (let head = 0; head < z * h; head++) {
    const base = head * s * d;
    // P: the scaled scores' softmax, row by row (causal: keys past the row are 0).
    for (let i = 0; i < s; i++) {
      const last = causal ? i : s - 1;
      let max = Number.NEGATIVE_INFINITY;
      for (let j = 0; j <= last; j++) {
        let dot = 0;
        for (let c = 0; c < d; c++) dot += (Q[base + i * d + c] as number) * (K[base + j * d + c] as number);
        p[i * s + j] = dot * scale;
        max = Math.max(max, dot * scale);
      }
      let sum = 0;
      for (let j = 0; j <= last; j++) {
        const e = Math.exp((p[i * s + j] as number) - max);
        p[i * s + j] = e;
        sum += e;
      }
      for (let j = 0; j < s; j++) p[i * s + j] = j <= last ? (p[i * s + j] as number) / sum : 0;
    }
    // Delta = rowsum(dout * O), O = P v.
    for (let i = 0; i < s; i++) {
      let rowDelta = 0;
      for (let c = 0; c < d; c++) {
        let sum = 0;
        for (let j = 0; j < s; j++) sum += (p[i * s + j] as number) * (V[base + j * d + c] as number);
        rowDelta += (DO[base + i * d + c] as number) * sum;
      }
      delta[i] = rowDelta;
    }
    // dv = P^T dout.
    for (let j = 0; j < s; j++) {
      for (let c = 0; c < d; c++) {
        let sum = 0;
        for (let i = 0; i < s; i++) sum += (p[i * s + j] as number) * (DO[base + i * d + c] as number);
        dv[base + j * d + c] = sum;
      }
    }
    // dS = P * (dout v^T - Delta), in place of P.
    for (let i = 0; i < s; i++) {
      for (let j = 0; j < s; j++) {
        let dp = 0;
        for (let c = 0; c < d; c++) dp += (DO[base + i * d + c] as number) * (V[base + j * d + c] as number);
        p[i * s + j] = (p[i * s + j] as number) * (dp - (delta[i] as number));
      }
    }
    // dq = dS k * scale, dk = dS^T q * scale.
    for (let i = 0; i < s; i++) {
      for (let c = 0; c < d; c++) {
        let sumQ = 0;
        let sumK = 0;
        for (let j = 0; j < s; j++) {
          sumQ += (p[i * s + j] as number) * (K[base + j * d + c] as number);
          sumK += (p[j * s + i] as number) * (Q[base + j * d + c] as number);
        }
        dq[base + i * d + c] = sumQ * scale;
        dk[base + i * d + c] = sumK * scale;
      }
    }
  }
  const shape = [z, h, s, d];
  return {
    dq: Tensor.fromArray(dq, shape, dtype),
    dk: Tensor.fromArray(dk, shape, dtype),
    dv: Tensor.fromArray(dv, shape, dtype),
  };
}
