import { KbError } from "@kb/errors";
import { type BenchCheck, defineBench, type Simulator } from "@kb/runtime";
import type { Dtype, Tensor } from "@kb/tensor";
import * as z from "zod";
import { type LayerDims, PRESETS, type PresetName, rankDims } from "./lib/llm/config.js";
import { type LayerLaunch, layerPlanOf, runLayer, uploadLayer } from "./lib/llm/layer.js";
import { placeRanks } from "./lib/llm/ranks.js";
import { type LayerWeights, layerReference, type PastCache } from "./lib/llm/reference.js";
import { layerReport } from "./lib/llm/report.js";
import { dtypeParam, gridParams, seedParam } from "./lib/params.js";

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

/** The tile params of a decoder layer's kernels (projections and attention), shared by the layer benches. */
export const layerTileParams = {
  tm: z.number().int().positive().default(128).describe("Output rows per projection tile."),
  tn: z.number().int().positive().default(128).describe("Output columns per projection tile."),
  tk: z.number().int().positive().default(128).describe("Reduction step of the projections."),
  block: z.number().int().positive().default(128).describe("Query rows and keys per attention block."),
};

/**
 * One Llama decoder layer (or `layers` identical ones back to back) from tl kernels, tensor
 * parallel over the grid's cubes, within a SIP or across SIPs (Megatron: QKV and gate/up column-parallel, o-proj and down
 * row-parallel with an @kb/ccl all-reduce after each); a per-launch table with each kernel's time,
 * share, verdict and efficiency against its roofline, the communication share and the layer total.
 */
export default defineBench({
  name: "llama-layer",
  description:
    "A Llama decoder layer from tl kernels (RMSNorm, fused QKV projection with GQA, RoPE and KV-cache write, flash attention prefill or decode, o-proj, add+RMSNorm, gate/up with fused SwiGLU, down, residual), tensor parallel over cubes (within a SIP or across SIPs) with @kb/ccl all-reduces; per-launch time, share, verdict and roofline efficiency.",
  params: z.object({
    preset: z
      .enum(Object.keys(PRESETS) as [PresetName, ...PresetName[]])
      .default("tiny")
      .describe(
        "Layer dimensions: tiny (verifies in seconds), llama3-8b, llama3-70b (published dimensions).",
      ),
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
  }),
  async run(sim, p) {
    const preset = PRESETS[p.preset];
    const dims: LayerDims = preset;
    const dtype: Dtype = p.dtype;
    const seq = p.seq ?? preset.seq;
    if (dims.headDim % 2 !== 0) {
      throw new KbError("RUNTIME_INVALID", `llama-layer: headDim (${dims.headDim}) must be even for RoPE.`);
    }
    const placement = placeRanks(sim, p, p.tp, dims.kvHeads);
    rankDims(dims, placement.ranks.length); // refuses a tp that does not divide the heads or the FFN
    const decode = p.phase === "decode";
    const plan = layerPlanOf(p, dims, p.batch, seq);
    const { shape } = plan;
    const weights = randomWeights(sim, dims, dtype, p.seed);
    const rows = shape.batch * shape.tokens;
    const x = sim.random([rows, dims.hidden], dtype, { seed: p.seed + 20 });
    const kvWidth = dims.kvHeads * dims.headDim;
    const past: PastCache | null = decode
      ? {
          k: sim.random([p.batch * seq, kvWidth], dtype, { seed: p.seed + 21 }),
          v: sim.random([p.batch * seq, kvWidth], dtype, { seed: p.seed + 22 }),
        }
      : null;
    const buffers = await uploadLayer(sim, placement, plan, weights, x, past);
    const launches: LayerLaunch[] = [];
    for (let layer = 0; layer < p.layers; layer++) {
      launches.push(...(await runLayer(sim, placement, plan, buffers, layer, p.layers)));
    }
    const reference = async (): Promise<Tensor> => {
      let y = x;
      for (let layer = 0; layer < p.layers; layer++) y = layerReference(y, weights, dims, shape, past, dtype);
      return y;
    };
    let cached: Promise<Tensor> | null = null;
    const once = () => {
      cached ??= reference();
      return cached;
    };
    const check: Record<string, BenchCheck> = {};
    const last = buffers.length - 1;
    for (const r of [...new Set([0, last])]) {
      const b = buffers[r];
      if (b === undefined) continue;
      check[`out.rank${r}`] = { actual: p.layers % 2 === 0 ? b.X : b.Y, reference: once };
    }
    const title = `${p.preset} ${p.phase}, batch ${p.batch}, seq ${seq}, ${dtype}, tp ${placement.ranks.length} (${placement.ranks
      .map((rank) => `sip${rank.sip}.cube${rank.cube}`)
      .join(" ")}), ${p.layers} layer(s)`;
    return { check, report: layerReport(title, launches) };
  },
});
