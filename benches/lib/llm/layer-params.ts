import type { Simulator } from "@kb/runtime";
import type { Dtype } from "@kb/tensor";
import * as z from "zod";
import { dtypeParam, gridParams, seedParam } from "../params.js";
import { type LayerDims, PRESETS, type PresetName } from "./config.js";
import type { LayerWeights } from "./reference.js";

// What the transformer benches share: llama-layer's params and its seeded weights. Here, in
// lib/, so that a bench imports only lib files (the playground holds a bench and benches/lib).

/**
 * The layer's random weights (seeded): each projection uniform in +-sqrt(3 / K) (variance 1 / K),
 * so unit-variance inputs (the normalised residual) give unit-variance outputs and attention
 * scores of unit scale; the output projections of the two residual branches (o-proj, down) a
 * quarter of that (as scaled initialisations such as GPT-2's keep each branch small against the
 * residual stream; it also keeps the absolute rounding error of `x + branch` well inside the f16
 * tolerance); norms near 1.
 */
export function randomWeights(sim: Simulator, dims: LayerDims, dtype: Dtype, seed: number): LayerWeights {
  const { hidden, heads, kvHeads, headDim, ffn } = dims;
  const matrix = (rows: number, cols: number, i: number, gain = 1) => {
    const r = gain * Math.sqrt(3 / rows);
    return sim.random([rows, cols], dtype, { seed: seed + i, low: -r, high: r });
  };
  return {
    wq: matrix(hidden, heads * headDim, 1),
    wk: matrix(hidden, kvHeads * headDim, 2),
    wv: matrix(hidden, kvHeads * headDim, 3),
    wo: matrix(heads * headDim, hidden, 4, 0.25),
    wGate: matrix(hidden, ffn, 5),
    wUp: matrix(hidden, ffn, 6),
    wDown: matrix(ffn, hidden, 7, 0.25),
    attnNorm: sim.random([hidden], dtype, { seed: seed + 8, low: 0.5, high: 1.5 }),
    mlpNorm: sim.random([hidden], dtype, { seed: seed + 9, low: 0.5, high: 1.5 }),
  };
}

/**
 * {@link randomWeights} made on first call and kept: pass it to `uploadLayer`, whose shards are
 * deferred tensors, so a timing-only run (kb run without --verify) never makes the weights' bytes;
 * a run that makes its deferred data (--verify, --full-data) or a reference makes them once.
 */
export function lazyWeights(sim: Simulator, dims: LayerDims, dtype: Dtype, seed: number): () => LayerWeights {
  let made: LayerWeights | null = null;
  return () => {
    made ??= randomWeights(sim, dims, dtype, seed);
    return made;
  };
}

/** The tile params of a decoder layer's kernels (projections and attention), shared by the layer benches. */
export const layerTileParams = {
  tm: z.number().int().positive().default(128).describe("Output rows per projection tile."),
  tn: z.number().int().positive().default(128).describe("Output columns per projection tile."),
  tk: z.number().int().positive().default(128).describe("Reduction step of the projections."),
  block: z.number().int().positive().default(128).describe("Query rows and keys per attention block."),
};

/** llama-layer's params (llama-pp takes them with its own tp, layers and batch). */
export const layerParams = z.object({
  preset: z
    .enum(Object.keys(PRESETS) as [PresetName, ...PresetName[]])
    .default("tiny")
    .describe("Layer dimensions: tiny (verifies in seconds), llama3-8b, llama3-70b (published dimensions)."),
  seq: z
    .number()
    .int()
    .positive()
    .optional()
    .describe(
      "Prompt length (prefill) or cached positions (decode); default: the preset's (tiny 32, others 2048).",
    ),
  batch: z.number().int().positive().default(1).describe("Sequences."),
  phase: z
    .enum(["prefill", "decode"])
    .default("prefill")
    .describe(
      "prefill: seq new tokens, causal; decode: 1 new token per sequence over a KV cache of seq positions.",
    ),
  tp: z
    .union([z.literal("auto"), z.number().int().positive()])
    .default("auto")
    .describe(
      "Tensor-parallel ranks (a rank is a cube): up to the cubes of the grid's first SIP, one cube per SIP, or every cube of the grid (a two-level all-reduce across SIPs); auto: every cube of the first SIP if that divides the KV heads, else 1.",
    ),
  layers: z
    .number()
    .int()
    .positive()
    .default(1)
    .describe("Identical layers run back to back (each simulated)."),
  ...layerTileParams,
  blockRows: z
    .number()
    .int()
    .positive()
    .default(4)
    .describe("Rows per step of the norm, residual and RoPE kernels."),
  dtype: dtypeParam,
  seed: seedParam,
  ...gridParams,
});
