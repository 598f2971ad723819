import type { Simulator } from "@kb/runtime";
import type { Dtype, Tensor } from "@kb/tensor";
import * as z from "zod";
import { matmul } from "../reference.js";
import { layerParams } from "./layer-params.js";
import { MOE_PRESETS, type MoeDims, type MoePresetName } from "./moe-config.js";
import { type DispatchPlan, dispatchPlan } from "./moe-plan.js";
import {
  applyCapacity,
  type CapacityOutcome,
  expertCapacity,
  routeTokens,
  type TokenRoute,
} from "./moe-routing.js";
import type { ExpertWeights } from "./moe-run.js";
import type { LayerShape, LayerWeights } from "./reference.js";
import { type AttentionBlock, attentionBlockReference } from "./reference.js";

// What the MoE benches (moe-layer, moe-pp) share: their params, the experts' seeded weights and
// the host's routing plan of one layer.

/** The params of a MoE layer's dimensions, tokens, capacity, tiles, dtype, seed and grid. */
export const moeParams = layerParams
  .pick({
    batch: true,
    tm: true,
    tn: true,
    tk: true,
    block: true,
    dtype: true,
    seed: true,
    sips: true,
    cubes: true,
    pes: true,
  })
  .extend({
    preset: z
      .enum(Object.keys(MOE_PRESETS) as [MoePresetName, ...MoePresetName[]])
      .default("tiny")
      .describe("Layer dimensions: tiny (verifies in seconds), mixtral-8x7b (published dimensions)."),
    seq: z
      .number()
      .int()
      .positive()
      .optional()
      .describe("Prompt length (prefill); default: the preset's (tiny 32, mixtral-8x7b 512)."),
    capacityFactor: z
      .number()
      .positive()
      .optional()
      .describe(
        "Expert capacity = ceil(factor x tokens x topK / experts) assignments; first choices are kept before second ones, each in token order (GShard); default: no capacity (nothing dropped, as Mixtral).",
      ),
    blockRows: layerParams.shape.blockRows.describe(
      "Rows per step of the norm, router, dispatch and combine kernels.",
    ),
  });

/** Each expert's seeded weights (as llama-layer's MLP: uniform +-sqrt(3 / K), down a quarter of that). */
export function randomExpertWeights(
  sim: Simulator,
  dims: MoeDims,
  dtype: Dtype,
  seed: number,
): ExpertWeights[] {
  const matrix = (rows: number, cols: number, s: number, gain = 1) => {
    const r = gain * Math.sqrt(3 / rows);
    return sim.random([rows, cols], dtype, { seed: s, low: -r, high: r });
  };
  return Array.from({ length: dims.experts }, (_, e) => ({
    gate: matrix(dims.hidden, dims.ffn, seed + 100 + 3 * e),
    up: matrix(dims.hidden, dims.ffn, seed + 101 + 3 * e),
    down: matrix(dims.ffn, dims.hidden, seed + 102 + 3 * e, 0.25),
  }));
}

/** The router's seeded weight `[hidden, experts]`, uniform in +-sqrt(3 / hidden). */
export function randomRouter(sim: Simulator, dims: MoeDims, dtype: Dtype, seed: number): Tensor {
  const r = Math.sqrt(3 / dims.hidden);
  return sim.random([dims.hidden, dims.experts], dtype, { seed: seed + 30, low: -r, high: r });
}

/** The host's plan of one MoE layer: its attention block's reference and where each token goes. */
export interface MoeLayerRouting {
  readonly block: AttentionBlock;
  readonly routes: TokenRoute[];
  readonly capacity: number;
  readonly outcome: CapacityOutcome;
  readonly plan: DispatchPlan;
}

/**
 * Routes a layer's tokens on the host: the router on its reference of the attention block's
 * output (phase 1 cannot know routing computed from float results; see moe-plan.ts), the top-k,
 * the capacity (`capacityFactor` null: none) and the dispatch plan over `ep` groups.
 */
export function routeLayer(
  x: Tensor,
  weights: LayerWeights,
  attnDims: MoeDims,
  shape: LayerShape,
  router: Tensor,
  ep: number,
  capacityFactor: number | null,
  dtype: Dtype,
): MoeLayerRouting {
  const tokens = shape.batch * shape.tokens;
  const block = attentionBlockReference(x, weights, attnDims, shape, null, dtype);
  const logits = matmul(block.normed, router, "f32").toFloat64Array();
  const routes = routeTokens(logits, attnDims.experts, attnDims.topK);
  const capacity = expertCapacity(tokens, attnDims.experts, attnDims.topK, capacityFactor);
  const outcome = applyCapacity(routes, attnDims.experts, capacity);
  const plan = dispatchPlan(routes, outcome, attnDims.experts, ep);
  return { block, routes, capacity, outcome, plan };
}
