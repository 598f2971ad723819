import { KbError } from "@kb/errors";
import { type BenchCheck, defineBench } from "@kb/runtime";
import type { Dtype, Tensor } from "@kb/tensor";
import { type LayerDims, PRESETS, rankDims } from "./lib/llm/config.js";
import { type LayerLaunch, layerPlanOf, runLayer, uploadLayer } from "./lib/llm/layer.js";
import { layerParams, lazyWeights } from "./lib/llm/layer-params.js";
import { placeRanks } from "./lib/llm/ranks.js";
import { layerReference, type PastCache } from "./lib/llm/reference.js";
import { layerReport } from "./lib/llm/report.js";

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
  params: layerParams,
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
    // Made on first use: never in a timing run (uploadLayer's shards are deferred tensors).
    const weights = lazyWeights(sim, dims, dtype, p.seed);
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
      for (let layer = 0; layer < p.layers; layer++)
        y = layerReference(y, weights(), dims, shape, past, dtype);
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
    // Tokens through the layer(s): batch x prompt for a prefill, batch for a decode step.
    return { check, report: layerReport(title, launches), tokens: rows };
  },
});
