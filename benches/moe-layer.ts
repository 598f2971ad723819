import { TOLERANCES } from "@kb/data-executor";
import { type BenchCheck, defineBench } from "@kb/runtime";
import { type Dtype, Tensor } from "@kb/tensor";
import * as z from "zod";
import { rankDims } from "./lib/llm/config.js";
import { type LayerPlan, runLayer, uploadLayer } from "./lib/llm/layer.js";
import { randomWeights } from "./lib/llm/layer-params.js";
import { checkMoeSplit, MOE_PRESETS, type MoeDims } from "./lib/llm/moe-config.js";
import { moeParams, randomExpertWeights, randomRouter, routeLayer } from "./lib/llm/moe-params.js";
import { placeMoe } from "./lib/llm/moe-placement.js";
import { moeReference } from "./lib/llm/moe-reference.js";
import { moeReport } from "./lib/llm/moe-report.js";
import { MOE_STEPS, runMoe, uploadMoe } from "./lib/llm/moe-run.js";
import { gridOf } from "./lib/params.js";

/**
 * A Mixtral-style MoE decoder layer from tl kernels: llama-layer's attention block (tensor
 * parallel over every rank), then the MoE block: the router (gating GEMM, softmax, top-k
 * renormalised, as Hugging Face's MixtralSparseMoeBlock), GShard's capacity with dropped
 * assignments counted, the dispatch by all-to-all-v to the expert-parallel groups, grouped SwiGLU
 * expert GEMMs (tensor parallel inside a group, with an all-reduce), the reverse all-to-all-v and
 * the weighted combine. The host plans the dispatch from its reference of the router (see
 * moe-plan.ts: phase 1 cannot know routing computed from float results), and the device's own
 * router output is checked against that plan.
 */
export default defineBench({
  name: "moe-layer",
  description:
    "A Mixtral-style MoE decoder layer from tl kernels: llama-layer's attention, then router top-2 gating, capacity factor with dropped tokens counted, all-to-all-v dispatch to expert-parallel groups, grouped SwiGLU expert GEMMs (tensor parallel inside a group), all-to-all-v combine; tokens per expert, all-to-all vs expert GEMM time, per-launch verdicts.",
  params: moeParams.extend({
    ep: z
      .union([z.literal("auto"), z.number().int().positive()])
      .default("auto")
      .describe(
        "Expert-parallel groups (the experts split over them): with tp = 1 a group is a cube (cubes of the first SIP, or one cube per SIP); auto: the first SIP's cubes (tp = 1) or the SIPs (tp > 1) when that divides the experts, else 1.",
      ),
    tp: z
      .number()
      .int()
      .positive()
      .default(1)
      .describe(
        "Tensor-parallel ranks inside each expert group (each expert's columns split tp ways): with tp > 1 group g is the first tp cubes of SIP g.",
      ),
  }),
  async run(sim, p) {
    const dims: MoeDims = MOE_PRESETS[p.preset];
    const dtype: Dtype = p.dtype;
    const seq = p.seq ?? MOE_PRESETS[p.preset].seq;
    const whole = gridOf(sim, p);
    const autoEp = p.tp === 1 ? whole.cubes.length : whole.sips.length;
    const ep = p.ep === "auto" ? (dims.experts % autoEp === 0 ? autoEp : 1) : p.ep;
    checkMoeSplit(dims, ep, p.tp);
    const placement = placeMoe(sim, p, ep, p.tp, dims.kvHeads);
    const ranks = placement.attention.ranks;
    // The attention block is llama-layer's; its (unused) dense MLP is one column per rank.
    const attnDims = { ...dims, ffn: ranks.length };
    rankDims(attnDims, ranks.length);
    const shape = { batch: p.batch, tokens: seq, pos0: 0 };
    const layerPlan: LayerPlan = {
      dims: attnDims,
      shape,
      phase: "prefill",
      dtype,
      tiles: { tm: p.tm, tn: p.tn, tk: p.tk },
      block: p.block,
      blockRows: p.blockRows,
    };
    const weights = randomWeights(sim, attnDims, dtype, p.seed);
    const x = sim.random([p.batch * seq, dims.hidden], dtype, { seed: p.seed + 20 });
    const router = randomRouter(sim, dims, dtype, p.seed);
    const experts = randomExpertWeights(sim, dims, dtype, p.seed);
    const steps = 2 + MOE_STEPS.length;
    sim.progress(0, steps, "routing plan (host reference of the attention block)");
    const { block, routes, capacity, outcome, plan } = routeLayer(
      x,
      weights,
      attnDims,
      shape,
      router,
      ep,
      p.capacityFactor ?? null,
      dtype,
    );
    const buffers = await uploadLayer(sim, placement.attention, layerPlan, weights, x, null);
    const moe = await uploadMoe(sim, placement, dims, dtype, router, experts, plan);
    sim.progress(1, steps, "attention block");
    const launches = await runLayer(sim, placement.attention, layerPlan, buffers, 0, undefined, true);
    let step = 2;
    launches.push(
      ...(await runMoe(sim, placement, dims, plan, buffers, moe, {
        tiles: layerPlan.tiles,
        blockRows: p.blockRows,
        onStep: (name) => sim.progress(step++, steps, `MoE block: ${name}`),
      })),
    );
    const check: Record<string, BenchCheck> = {};
    for (const rank of [...new Set([0, ranks.length - 1])]) {
      const g = Math.floor(rank / p.tp);
      const span = plan.groups[g]?.tokens ?? { start: 0, count: 0 };
      const b = moe[rank];
      if (b === undefined) continue;
      const mine = routes.slice(span.start, span.start + span.count);
      check[`router.top.rank${rank}`] = {
        actual: b.Top,
        reference: async () =>
          Tensor.fromArray(
            mine.flatMap((t) => t.experts),
            [span.count, dims.topK],
            "i32",
          ),
      };
      check[`router.gate.rank${rank}`] = {
        actual: b.Gate,
        reference: async () =>
          Tensor.fromArray(
            mine.flatMap((t) => t.weights),
            [span.count, dims.topK],
            "f32",
          ),
        // f32 weights from logits of the layer's dtype: the host's and the device's router input
        // may differ by an ulp of that dtype, so the weights carry its tolerance.
        tolerance: { ...TOLERANCES[dtype] },
      };
      check[`out.rank${rank}`] = {
        actual: b.Y,
        reference: async () => moeReference(block, routes, outcome, experts, dims, span, dtype),
      };
    }
    const where = ranks.map((rank) => `sip${rank.sip}.cube${rank.cube}`).join(" ");
    const cf =
      p.capacityFactor === undefined
        ? "no capacity"
        : `capacity factor ${p.capacityFactor} (${capacity} per expert)`;
    const title = `${p.preset} prefill, batch ${p.batch}, seq ${seq}, ${dtype}, ep ${ep} x tp ${p.tp} (${where}), top-${dims.topK} of ${dims.experts} experts, ${cf}`;
    return { check, report: moeReport(title, launches, outcome), tokens: p.batch * seq };
  },
});
