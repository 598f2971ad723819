/**
 * The host reference of a Llama decoder layer, written from the model's definition and apart from
 * the kernels: plain loops over f64 arrays (the matrix products through `matmul` of
 * `../reference.ts`, f64 accumulation), the full weights (never the ranks' shards), exact softmax
 * (no online rescaling), RoPE angles in f64.
 *
 * Rounding points: the layer keeps its activations in the model's dtype where the kernels store
 * them to HBM (the normalised input, q / k / v, the rotated q and k, the attention output, the
 * normalised residual, the SwiGLU activation, the layer's output); the row-parallel outputs
 * (o-proj, down) are f32 partial sums in the kernels, reduced in f32 across ranks, and the
 * residual stream between attention and MLP is f32 ("residual in fp32"): here they are rounded to
 * f32 only. Everything between those points is f64, rounded once.
 */
import { type Dtype, Tensor } from "@kb/tensor";
import { matmul } from "../reference.js";
import type { LayerDims } from "./config.js";

/** The full (unsharded) weights of a layer, `[in, out]` row-major (`y = x @ W`). */
export interface LayerWeights {
  readonly wq: Tensor;
  readonly wk: Tensor;
  readonly wv: Tensor;
  readonly wo: Tensor;
  readonly wGate: Tensor;
  readonly wUp: Tensor;
  readonly wDown: Tensor;
  /** RMSNorm weights `[hidden]` before attention and before the MLP. */
  readonly attnNorm: Tensor;
  readonly mlpNorm: Tensor;
}

/** Which tokens a layer call processes. */
export interface LayerShape {
  readonly batch: number;
  /** New tokens per sequence (prompt length in prefill, 1 in decode). */
  readonly tokens: number;
  /** Position of the first new token: 0 in prefill, the cached length in decode. */
  readonly pos0: number;
}

/** The cached keys and values of positions `0..pos0 - 1`, `[batch x pos0, kvHeads x headDim]`. */
export interface PastCache {
  readonly k: Tensor;
  readonly v: Tensor;
}

const round = (values: Float64Array, shape: readonly number[], dtype: Dtype) =>
  Tensor.fromArray(values, shape, dtype).toFloat64Array();

/** `x[r] / sqrt(mean(x[r]^2) + eps) * w` per row of `x` `[rows, H]`. */
export function rmsNormReference(x: Float64Array, w: Float64Array, eps: number): Float64Array {
  const hidden = w.length;
  const out = new Float64Array(x.length);
  for (let r = 0; r < x.length / hidden; r++) {
    let squares = 0;
    for (let c = 0; c < hidden; c++) squares += x[r * hidden + c]! ** 2;
    const inverse = 1 / Math.sqrt(squares / hidden + eps);
    for (let c = 0; c < hidden; c++) out[r * hidden + c] = x[r * hidden + c]! * inverse * w[c]!;
  }
  return out;
}

/**
 * RoPE in place on `x` `[batch x tokens, heads x headDim]`: in each head, element `i < headDim / 2`
 * and its partner `i + headDim / 2` rotate by `position x theta^(-2i / headDim)`.
 */
export function ropeReference(x: Float64Array, heads: number, dims: LayerDims, shape: LayerShape): void {
  const { headDim, ropeTheta } = dims;
  const half = headDim / 2;
  const width = heads * headDim;
  for (let row = 0; row < x.length / width; row++) {
    const position = shape.pos0 + (row % shape.tokens);
    for (let h = 0; h < heads; h++) {
      const base = row * width + h * headDim;
      for (let i = 0; i < half; i++) {
        const angle = position / ropeTheta ** ((2 * i) / headDim);
        const [a, b] = [x[base + i]!, x[base + i + half]!];
        x[base + i] = a * Math.cos(angle) - b * Math.sin(angle);
        x[base + i + half] = b * Math.cos(angle) + a * Math.sin(angle);
      }
    }
  }
}

/**
 * Causal GQA attention with exact softmax: query row `j` of sequence `b` (position `pos0 + j`) and
 * head `h` attends to keys `0..pos0 + j` of KV head `floor(h / (heads / kvHeads))`; `keys(b, p)`,
 * `values(b, p)` give the offset of position `p`'s row in `k` / `v` (width kvHeads x headDim).
 */
export function attentionReference(
  q: Float64Array,
  k: Float64Array,
  v: Float64Array,
  rowOf: (b: number, position: number) => number,
  dims: LayerDims,
  shape: LayerShape,
): Float64Array {
  const { heads, kvHeads, headDim } = dims;
  const scale = 1 / Math.sqrt(headDim);
  const kvWidth = kvHeads * headDim;
  const out = new Float64Array(shape.batch * shape.tokens * heads * headDim);
  const scores = new Float64Array(shape.pos0 + shape.tokens);
  for (let b = 0; b < shape.batch; b++) {
    for (let j = 0; j < shape.tokens; j++) {
      const row = b * shape.tokens + j;
      const last = shape.pos0 + j;
      for (let h = 0; h < heads; h++) {
        const kvCol = Math.floor(h / (heads / kvHeads)) * headDim;
        const qAt = (row * heads + h) * headDim;
        let max = Number.NEGATIVE_INFINITY;
        for (let p = 0; p <= last; p++) {
          const kAt = rowOf(b, p) * kvWidth + kvCol;
          let dot = 0;
          for (let d = 0; d < headDim; d++) dot += q[qAt + d]! * k[kAt + d]!;
          scores[p] = dot * scale;
          max = Math.max(max, scores[p]!);
        }
        let sum = 0;
        for (let p = 0; p <= last; p++) {
          scores[p] = Math.exp(scores[p]! - max);
          sum += scores[p]!;
        }
        for (let p = 0; p <= last; p++) {
          const vAt = rowOf(b, p) * kvWidth + kvCol;
          const weight = scores[p]! / sum;
          for (let d = 0; d < headDim; d++) out[qAt + d]! += weight * v[vAt + d]!;
        }
      }
    }
  }
  return out;
}

/** SiLU in f64: `x / (1 + e^-x)`. */
export const silu = (x: number) => x / (1 + Math.exp(-x));

/**
 * One decoder layer: `h = x + Wo attn(rope(q), rope(k), v)` with q, k, v from `rmsnorm(x)`, then
 * `out = h + Wdown (silu(Wgate n) * (Wup n))` with `n = rmsnorm(h)`. `x` is `[batch x tokens,
 * hidden]`; `past` holds positions before `pos0` (decode). Returns `out` in `dtype`.
 */
export function layerReference(
  x: Tensor,
  weights: LayerWeights,
  dims: LayerDims,
  shape: LayerShape,
  past: PastCache | null,
  dtype: Dtype,
): Tensor {
  const rows = shape.batch * shape.tokens;
  const tensor = (values: Float64Array, cols: number) => Tensor.fromArray(values, [rows, cols], dtype);
  const { residual, normed: normed2 } = attentionBlockReference(x, weights, dims, shape, past, dtype);
  const gate = matmul(normed2, weights.wGate, "f32").toFloat64Array();
  const up = matmul(normed2, weights.wUp, "f32").toFloat64Array();
  const act = new Float64Array(gate.length);
  for (let i = 0; i < act.length; i++) act[i] = silu(gate[i]!) * up[i]!;
  const down = matmul(tensor(act, dims.ffn), weights.wDown, "f32").toFloat64Array();
  const out = new Float64Array(residual.length);
  for (let i = 0; i < out.length; i++) out[i] = residual[i]! + down[i]!;
  return tensor(out, dims.hidden);
}

/** The attention block's results: the f32 residual stream after it and its normalisation in `dtype`. */
export interface AttentionBlock {
  /** `h = x + Wo attn(...)`, rounded to f32, `[batch x tokens, hidden]`. */
  readonly residual: Float64Array;
  /** `rmsnorm(h) * mlpNorm` in `dtype`: the MLP's (or MoE block's) input. */
  readonly normed: Tensor;
}

/** The first half of {@link layerReference}: attention and its residual, then the MLP's RMSNorm. */
export function attentionBlockReference(
  x: Tensor,
  weights: LayerWeights,
  dims: LayerDims,
  shape: LayerShape,
  past: PastCache | null,
  dtype: Dtype,
): AttentionBlock {
  const { hidden, heads, kvHeads, headDim, eps } = dims;
  const rows = shape.batch * shape.tokens;
  const tensor = (values: Float64Array, cols: number) => Tensor.fromArray(values, [rows, cols], dtype);
  const xs = x.toFloat64Array();
  const normed = tensor(rmsNormReference(xs, weights.attnNorm.toFloat64Array(), eps), hidden);
  const q = matmul(normed, weights.wq, dtype).toFloat64Array();
  const k = matmul(normed, weights.wk, dtype).toFloat64Array();
  const v = matmul(normed, weights.wv, dtype).toFloat64Array();
  ropeReference(q, heads, dims, shape);
  ropeReference(k, kvHeads, dims, shape);
  const qr = round(q, [rows, heads * headDim], dtype);
  const kr = round(k, [rows, kvHeads * headDim], dtype);
  // Keys and values of every position: the cached ones first, then this call's, per sequence.
  const ctx = shape.pos0 + shape.tokens;
  const kvWidth = kvHeads * headDim;
  const keys = new Float64Array(shape.batch * ctx * kvWidth);
  const values = new Float64Array(shape.batch * ctx * kvWidth);
  const pastK = past?.k.toFloat64Array();
  const pastV = past?.v.toFloat64Array();
  for (let b = 0; b < shape.batch; b++) {
    for (let p = 0; p < ctx; p++) {
      const at = (b * ctx + p) * kvWidth;
      const fromPast = p < shape.pos0;
      const src = fromPast ? (b * shape.pos0 + p) * kvWidth : (b * shape.tokens + p - shape.pos0) * kvWidth;
      keys.set((fromPast ? pastK! : kr).subarray(src, src + kvWidth), at);
      values.set((fromPast ? pastV! : v).subarray(src, src + kvWidth), at);
    }
  }
  const attn = attentionReference(qr, keys, values, (b, p) => b * ctx + p, dims, shape);
  const o = matmul(tensor(attn, heads * headDim), weights.wo, "f32").toFloat64Array();
  const h = new Float64Array(xs.length);
  for (let i = 0; i < h.length; i++) h[i] = xs[i]! + o[i]!;
  const residual = round(h, [rows, hidden], "f32"); // the mid-layer residual stream is f32
  const mlpInput = tensor(rmsNormReference(residual, weights.mlpNorm.toFloat64Array(), eps), hidden);
  return { residual, normed: mlpInput };
}
