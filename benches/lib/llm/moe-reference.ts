import { type Dtype, Tensor } from "@kb/tensor";
import type { Span } from "../split.js";
import type { MoeDims } from "./moe-config.js";
import type { CapacityOutcome, TokenRoute } from "./moe-routing.js";
import type { ExpertWeights } from "./moe-run.js";
import { type AttentionBlock, silu } from "./reference.js";

/**
 * The host reference of the MoE block for the tokens of `span`, from the attention block's
 * reference, written from the model's definition (Mixtral's sparse MoE block with GShard's
 * capacity): `y[t] = h[t] + sum over t's kept choices k of w_k x down_e(act)`, with
 * `act = silu(n[t] Wg_e) * (n[t] Wu_e)` rounded to `dtype` where the kernels store it, the expert
 * output rounded to f32 (its all-reduced, returned form), everything else in f64, `y` rounded to
 * `dtype` once. The routes and kept choices are the plan the host made from the same reference.
 */
export function moeReference(
  block: AttentionBlock,
  routes: readonly TokenRoute[],
  outcome: CapacityOutcome,
  experts: readonly ExpertWeights[],
  dims: MoeDims,
  span: Span,
  dtype: Dtype,
): Tensor {
  const { hidden, ffn } = dims;
  const normed = block.normed.toFloat64Array();
  const weights = experts.map((e) => ({
    gate: e.gate.toFloat64Array(),
    up: e.up.toFloat64Array(),
    down: e.down.toFloat64Array(),
  }));
  const out = new Float64Array(span.count * hidden);
  const act = new Float64Array(ffn);
  const expertOut = new Float64Array(hidden);
  for (let i = 0; i < span.count; i++) {
    const t = span.start + i;
    const row = out.subarray(i * hidden, (i + 1) * hidden);
    row.set(block.residual.subarray(t * hidden, (t + 1) * hidden));
    const route = routes[t] as TokenRoute;
    for (const [k, e] of route.experts.entries()) {
      if (outcome.kept[t]?.[k] !== true) continue;
      const w = weights[e] as (typeof weights)[number];
      for (let f = 0; f < ffn; f++) {
        let g = 0;
        let u = 0;
        for (let c = 0; c < hidden; c++) {
          const x = normed[t * hidden + c] as number;
          g += x * (w.gate[c * ffn + f] as number);
          u += x * (w.up[c * ffn + f] as number);
        }
        act[f] = silu(g) * u;
      }
      const rounded = Tensor.fromArray(act, [ffn], dtype).toFloat64Array();
      expertOut.fill(0);
      for (let f = 0; f < ffn; f++) {
        const a = rounded[f] as number;
        for (let c = 0; c < hidden; c++)
          expertOut[c] = (expertOut[c] as number) + a * (w.down[f * hidden + c] as number);
      }
      const f32 = Tensor.fromArray(expertOut, [hidden], "f32").toFloat64Array();
      const weight = route.weights[k] as number;
      for (let c = 0; c < hidden; c++) row[c] = (row[c] as number) + weight * (f32[c] as number);
    }
  }
  return Tensor.fromArray(out, [span.count, hidden], dtype);
}
