import { KbError } from "@kb/errors";
import { type BenchCheck, type DeviceTensor, defineBench, type LaunchRecord } from "@kb/runtime";
import { type Dtype, Tensor } from "@kb/tensor";
import * as z from "zod";
import { type LayerDims, PRESETS, rankDims } from "./lib/llm/config.js";
import { layerPlanOf, type RankBuffers, runLayer, uploadLayer } from "./lib/llm/layer.js";
import { layerParams, lazyWeights } from "./lib/llm/layer-params.js";
import { pipelineParams } from "./lib/llm/pipeline-params.js";
import { placeStages } from "./lib/llm/pipeline-place.js";
import { pipelineReport } from "./lib/llm/pipeline-report.js";
import { runPipeline } from "./lib/llm/pipeline-run.js";
import { pipelineTimeline } from "./lib/llm/pipeline-schedule.js";
import type { TpPlacement } from "./lib/llm/ranks.js";
import { layerReference, type PastCache } from "./lib/llm/reference.js";

/** Where a stage's layers leave the residual stream: layers alternate X -> Y -> X. */
const outOf = (b: RankBuffers, layers: number) => (layers % 2 === 0 ? b.X : b.Y);

/**
 * Pipeline parallelism: `layers` Llama decoder layers (llama-layer's, identical weights) split
 * into `pp` stages of `layers / pp` consecutive layers, each stage tensor parallel over its own
 * cubes (a SIP per stage when the grid has `pp` SIPs, else a cube per stage of one SIP), the batch
 * split into `microBatches` micro-batches of sequences that flow stage to stage (rank i of stage s
 * sends its activations to rank i of stage s + 1 with @kb/ccl's irecv / send), in GPipe's order.
 * Each stage is a host stream (`sim.streams`), so the stages run at the same simulated time and
 * contend for the machine; the table gives each forward and transfer as simulated, each stage's
 * busy time and bubble beside GPipe's (pp-1)/(m+pp-1), and when each micro-batch leaves.
 * `--verify` checks every micro-batch's output against the layers applied in order on the host.
 */
export default defineBench({
  name: "llama-pp",
  description:
    "Pipeline-parallel Llama: layers split into pp stages (a SIP or a cube each, tensor parallel within a stage), micro-batches of sequences sent stage to stage with @kb/ccl send/recv in GPipe order; per stage busy time and bubble beside (pp-1)/(m+pp-1), per micro-batch end times, send time.",
  params: layerParams.omit({ tp: true, layers: true, batch: true }).extend({
    ...pipelineParams,
    tp: z
      .union([z.literal("auto"), z.number().int().positive()])
      .default("auto")
      .describe(
        "Tensor-parallel ranks per stage (cubes of the stage's SIP); auto: all its cubes when they divide the KV heads, else 1; 1 when stages are cubes.",
      ),
    schedule: z
      .enum(["gpipe"])
      .default("gpipe")
      .describe(
        "gpipe: all stages take the micro-batches in order, m on stage s after m - 1 (for decode: one token per sequence, micro-batches of sequences); 1F1B needs a backward pass and is GPipe for inference.",
      ),
  }),
  async run(sim, p) {
    const preset = PRESETS[p.preset];
    const dims: LayerDims = preset;
    const dtype: Dtype = p.dtype;
    const seq = p.seq ?? preset.seq;
    if (p.layers % p.pp !== 0) {
      throw new KbError(
        "RUNTIME_INVALID",
        `llama-pp: param pp=${p.pp} must divide param layers=${p.layers}: each stage runs the same number of layers. Choose layers as a multiple of ${p.pp}.`,
      );
    }
    if (p.batch % p.microBatches !== 0) {
      throw new KbError(
        "RUNTIME_INVALID",
        `llama-pp: param microBatches=${p.microBatches} must divide param batch=${p.batch}: each micro-batch has the same sequences. Choose batch as a multiple of ${p.microBatches}.`,
      );
    }
    const placement = placeStages(sim, p, p.pp, p.tp, dims.kvHeads);
    const tp = placement.stages[0]?.ranks.length ?? 1;
    rankDims(dims, tp);
    const perStage = p.layers / p.pp;
    const m = p.microBatches;
    const decode = p.phase === "decode";
    const plan = layerPlanOf(p, dims, p.batch / m, seq);
    const { shape } = plan;
    // Made on first use: never in a timing run (uploadLayer's shards are deferred tensors).
    const weights = lazyWeights(sim, dims, dtype, p.seed);
    const rows = shape.batch * shape.tokens;
    const kvWidth = dims.kvHeads * dims.headDim;
    // Micro-batch mb's inputs: seeds seed + 20 + 3 mb (x) and the two after it (the KV cache), so
    // one micro-batch has llama-layer's inputs.
    const inputs = Array.from({ length: m }, (_, mb) => {
      const seed = p.seed + 20 + 3 * mb;
      const past: PastCache | null = decode
        ? {
            k: sim.random([shape.batch * seq, kvWidth], dtype, { seed: seed + 1 }),
            v: sim.random([shape.batch * seq, kvWidth], dtype, { seed: seed + 2 }),
          }
        : null;
      return { x: sim.random([rows, dims.hidden], dtype, { seed }), past };
    });
    const zeros = Tensor.zeros([rows, dims.hidden], dtype);
    // buffers[s][mb]: stage s's ranks' tensors for micro-batch mb (stage 0's X the input, the
    // others' X filled by the transfer from the stage before); one copy of the weights per stage.
    const buffers: RankBuffers[][][] = [];
    for (const [s, stage] of placement.stages.entries()) {
      const mine: RankBuffers[][] = [];
      for (const { x, past } of inputs) {
        mine.push(await uploadLayer(sim, stage, plan, weights, s === 0 ? x : zeros, past, mine[0]));
      }
      buffers.push(mine);
    }
    // Each stage is a host stream (lib/llm/pipeline-run.ts): the stages' launches overlap.
    const measured = await runPipeline(sim, p.pp, m, {
      forward: async (stage, microBatch) => {
        const mine = buffers[stage]?.[microBatch] as RankBuffers[];
        const records: LaunchRecord[] = [];
        for (let layer = 0; layer < perStage; layer++) {
          const launches = await runLayer(sim, placement.stages[stage] as TpPlacement, plan, mine, layer);
          records.push(...launches.map((launch) => launch.record));
        }
        return records;
      },
      send: (stage, microBatch) =>
        placement.send(
          stage,
          ((buffers[stage] as RankBuffers[][])[microBatch] as RankBuffers[]).map((b) => outOf(b, perStage)),
          ((buffers[stage + 1] as RankBuffers[][])[microBatch] as RankBuffers[]).map((b) => b.X),
        ),
    });
    const timeline = pipelineTimeline(p.pp, m, measured);
    const check: Record<string, BenchCheck> = {};
    const last = buffers.at(-1) as RankBuffers[][];
    for (const [mb, { x, past }] of inputs.entries()) {
      let cached: Tensor | null = null;
      const reference = () => {
        if (cached === null) {
          let y = x;
          for (let layer = 0; layer < p.layers; layer++)
            y = layerReference(y, weights(), dims, shape, past, dtype);
          cached = y;
        }
        return cached;
      };
      const ranks = last[mb] as RankBuffers[];
      for (const r of [...new Set([0, ranks.length - 1])]) {
        check[`mb${mb}.rank${r}`] = {
          actual: outOf(ranks[r] as RankBuffers, perStage) as DeviceTensor,
          reference,
        };
      }
    }
    const where = placement.stages
      .map(
        (stage, s) => `stage ${s}: ${stage.ranks.map((rank) => `sip${rank.sip}.cube${rank.cube}`).join(" ")}`,
      )
      .join("; ");
    const title = `${p.preset} ${p.phase}, ${p.schedule}, pp ${p.pp} x tp ${tp} (${where}), ${p.layers} layer(s) (${perStage} per stage), batch ${p.batch} in ${m} micro-batch(es), seq ${seq}, ${dtype}`;
    return { check, report: pipelineReport(title, timeline, placement.pairs), tokens: rows * m };
  },
});
