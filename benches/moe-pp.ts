import { KbError } from "@kb/errors";
import { type BenchCheck, type DeviceTensor, defineBench, type LaunchRecord } from "@kb/runtime";
import { type Dtype, Tensor } from "@kb/tensor";
import * as z from "zod";
import { rankDims } from "./lib/llm/config.js";
import {
  type LayerLaunch,
  type LayerPlan,
  type RankBuffers,
  runLayer,
  uploadLayer,
} from "./lib/llm/layer.js";
import { randomWeights } from "./lib/llm/layer-params.js";
import { checkMoeSplit, MOE_PRESETS, type MoeDims } from "./lib/llm/moe-config.js";
import {
  type MoeLayerRouting,
  moeParams,
  randomExpertWeights,
  randomRouter,
  routeLayer,
} from "./lib/llm/moe-params.js";
import { placeMoePipeline } from "./lib/llm/moe-pp-place.js";
import { moePipelineReport } from "./lib/llm/moe-pp-report.js";
import { moeReference } from "./lib/llm/moe-reference.js";
import { type MoeBuffers, runMoe, uploadMoe } from "./lib/llm/moe-run.js";
import { pipelineParams } from "./lib/llm/pipeline-params.js";
import { runPipeline } from "./lib/llm/pipeline-run.js";
import { pipelineTimeline } from "./lib/llm/pipeline-schedule.js";
import { gridOf } from "./lib/params.js";

/** The tensors of one micro-batch on one stage: its attention buffers, each layer's MoE buffers and residual streams. */
interface StageBuffers {
  readonly attention: RankBuffers[];
  readonly moe: MoeBuffers[][];
  /** `stream[l][r]`: rank r's input of the stage's layer l; `stream[layers]` the stage's output. */
  readonly stream: DeviceTensor[][];
}

/**
 * One Mixtral-style model placed over all three axes: `layers` MoE decoder layers (moe-layer's,
 * identical weights) split into `pp` pipeline stages (llama-pp's placement, GPipe order and
 * send / irecv transfers), each stage's layers over `ep x tp` cubes of its SIP: the attention
 * block tensor parallel over all of them, the experts over `ep` groups of a cube (dispatch and
 * combine by all-to-all-v, the layer's output rows all-gathered for the next layer's attention)
 * or tensor parallel over `tp` cubes (ep = 1). The host routes each layer from its own reference
 * of that layer's input (moe-plan.ts), so every micro-batch's tokens go where the device sends
 * them. The table leads with the makespan and the cubes occupied (what sweeps/placement.yaml
 * trades) and the launch time by verdict, then llama-pp's pipeline rows and the routing.
 */
export default defineBench({
  name: "moe-pp",
  description:
    "A Mixtral-style MoE model placed over pp x ep x tp: layers split into pipeline stages (a SIP or a cube each, GPipe order, send/recv between stages), each stage's MoE layers over ep expert groups (all-to-all-v dispatch and combine, all-gather of the output) or tp cubes; makespan, cubes occupied, launch time by verdict, stage bubbles, tokens per expert.",
  params: moeParams.extend({
    ...pipelineParams,
    ep: z
      .union([z.literal("auto"), z.number().int().positive()])
      .default("auto")
      .describe(
        "Expert-parallel groups per stage (a cube each, tp = 1); auto: the cubes of a SIP when the stages are SIPs (or pp = 1), they divide the experts and the micro-batch's tokens and tp = 1, else 1.",
      ),
    tp: z
      .number()
      .int()
      .positive()
      .default(1)
      .describe("Tensor-parallel cubes of the one expert group of a stage (ep = 1)."),
  }),
  async run(sim, p) {
    const dims: MoeDims = MOE_PRESETS[p.preset];
    const dtype: Dtype = p.dtype;
    const seq = p.seq ?? MOE_PRESETS[p.preset].seq;
    const m = p.microBatches;
    for (const [what, of, by] of [
      ["layers", p.layers, "pp"],
      ["batch", p.batch, "microBatches"],
    ] as const) {
      const divisor = by === "pp" ? p.pp : m;
      if (of % divisor !== 0) {
        throw new KbError(
          "RUNTIME_INVALID",
          `moe-pp: param ${by}=${divisor} must divide param ${what}=${of}: each ${by === "pp" ? "stage runs the same number of layers" : "micro-batch has the same sequences"}. Choose ${what} as a multiple of ${divisor}.`,
        );
      }
    }
    const tokens = (p.batch / m) * seq;
    const whole = gridOf(sim, p);
    const perSip = whole.cubes.length;
    const sipStages = p.pp === 1 || whole.sips.length >= p.pp;
    const autoEp =
      p.tp === 1 && sipStages && dims.experts % perSip === 0 && tokens % perSip === 0 ? perSip : 1;
    const ep = p.ep === "auto" ? autoEp : p.ep;
    checkMoeSplit(dims, ep, p.tp, "moe-pp");
    const place = placeMoePipeline(sim, p, p.pp, ep, p.tp, dims.kvHeads, tokens);
    const ranks = ep * p.tp;
    // The attention block is llama-layer's; its (unused) dense MLP is one column per rank.
    const attnDims = { ...dims, ffn: ranks };
    rankDims(attnDims, ranks);
    const shape = { batch: p.batch / m, tokens: seq, pos0: 0 };
    const tiles = { tm: p.tm, tn: p.tn, tk: p.tk };
    const plan: LayerPlan = {
      dims: attnDims,
      shape,
      phase: "prefill",
      dtype,
      tiles,
      block: p.block,
      blockRows: p.blockRows,
    };
    const weights = randomWeights(sim, attnDims, dtype, p.seed);
    const router = randomRouter(sim, dims, dtype, p.seed);
    const experts = randomExpertWeights(sim, dims, dtype, p.seed);
    // Micro-batch mb's input: seed + 20 (moe-layer's) + 1000 mb.
    const inputs = Array.from({ length: m }, (_, mb) =>
      sim.random([tokens, dims.hidden], dtype, { seed: p.seed + 20 + 1000 * mb }),
    );
    // The host's plan: each micro-batch through the layers on the host, routing each layer.
    const routing: MoeLayerRouting[][] = [];
    const outputs: Tensor[] = [];
    for (const [mb, x0] of inputs.entries()) {
      sim.progress(
        mb,
        m,
        `routing plan of micro-batch ${mb + 1} (host reference of its ${p.layers} layer(s))`,
      );
      let x = x0;
      const mine: MoeLayerRouting[] = [];
      for (let layer = 0; layer < p.layers; layer++) {
        const r = routeLayer(x, weights, attnDims, shape, router, ep, p.capacityFactor ?? null, dtype);
        mine.push(r);
        x = moeReference(r.block, r.routes, r.outcome, experts, dims, { start: 0, count: tokens }, dtype);
      }
      routing.push(mine);
      outputs.push(x);
    }
    const perStage = p.layers / p.pp;
    const zeros = Tensor.zeros([tokens, dims.hidden], dtype);
    // buffers[s][mb]; one copy of the weights per stage (shared by its micro-batches and layers).
    const buffers: StageBuffers[][] = [];
    for (const [s, stage] of place.stages.entries()) {
      const mine: StageBuffers[] = [];
      for (const [mb, x] of inputs.entries()) {
        const first = mine[0];
        const attention = await uploadLayer(
          sim,
          stage.attention,
          plan,
          weights,
          s === 0 ? x : zeros,
          null,
          first?.attention,
        );
        const moe: MoeBuffers[][] = [];
        const stream = [attention.map((b) => b.X)];
        for (let l = 0; l < perStage; l++) {
          const layer = s * perStage + l;
          const dispatch = ((routing[mb] as MoeLayerRouting[])[layer] as MoeLayerRouting).plan;
          const b = await uploadMoe(
            sim,
            stage,
            dims,
            dtype,
            router,
            experts,
            dispatch,
            first?.moe[0] ?? moe[0],
          );
          moe.push(b);
          stream.push(
            ep === 1
              ? b.map((rank) => rank.Y)
              : stage.attention.ranks.map((rank, r) =>
                  sim.empty([tokens, dims.hidden], dtype, {
                    ...rank,
                    name: `moe_pp.x${layer + 1}.mb${mb}.r${r}`,
                  }),
                ),
          );
        }
        mine.push({ attention, moe, stream });
      }
      buffers.push(mine);
    }
    const launches: LayerLaunch[] = [];
    const sends: LaunchRecord[] = [];
    // Each stage is a host stream (lib/llm/pipeline-run.ts): the stages' launches overlap.
    const measured = await runPipeline(sim, p.pp, m, {
      forward: async (s, mb) => {
        const stage = place.stages[s] as (typeof place.stages)[number];
        const mine = buffers[s]?.[mb] as StageBuffers;
        const records: LaunchRecord[] = [];
        for (let l = 0; l < perStage; l++) {
          const layer = s * perStage + l;
          const input = mine.stream[l] as DeviceTensor[];
          const attention = mine.attention.map((b, r) => ({ ...b, X: input[r] as DeviceTensor }));
          // Layer 0 of runLayer reads X (the stream's input here); the launches are relabelled below.
          const ran = await runLayer(sim, stage.attention, plan, attention, 0, undefined, true);
          const dispatch = ((routing[mb] as MoeLayerRouting[])[layer] as MoeLayerRouting).plan;
          const moe = mine.moe[l] as MoeBuffers[];
          ran.push(
            ...(await runMoe(sim, stage, dims, dispatch, attention, moe, { tiles, blockRows: p.blockRows })),
          );
          const gathered = await place.gather(
            s,
            "all-gather output",
            mine.stream[l + 1] as DeviceTensor[],
            moe.map((b) => b.Y),
          );
          ran.push(
            ...gathered.map(({ name, record }) => ({ layer, kernel: name, communication: true, record })),
          );
          launches.push(...ran.map((launch) => ({ ...launch, layer })));
          records.push(...ran.map((launch) => launch.record));
        }
        return records;
      },
      send: async (s, mb) => {
        if (place.pipeline === null) return [];
        const sent = await place.pipeline.send(
          s,
          ((buffers[s] as StageBuffers[])[mb] as StageBuffers).stream[perStage] as DeviceTensor[],
          ((buffers[s + 1] as StageBuffers[])[mb] as StageBuffers).attention.map((b) => b.X),
        );
        sends.push(...sent);
        return sent;
      },
    });
    const check: Record<string, BenchCheck> = {};
    for (const [mb, reference] of outputs.entries()) {
      const out = buffers.at(-1)?.[mb]?.stream[perStage] as DeviceTensor[];
      for (const r of [...new Set([0, out.length - 1])]) {
        check[`mb${mb}.rank${r}`] = { actual: out[r] as DeviceTensor, reference: async () => reference };
      }
    }
    const where = place.stages
      .map(
        (stage, s) =>
          `stage ${s}: ${stage.attention.ranks.map((rank) => `sip${rank.sip}.cube${rank.cube}`).join(" ")}`,
      )
      .join("; ");
    const cf = p.capacityFactor === undefined ? "no capacity" : `capacity factor ${p.capacityFactor}`;
    const title = `${p.preset} prefill, pp ${p.pp} x ep ${ep} x tp ${p.tp} (${where}), ${p.layers} layer(s) (${perStage} per stage), batch ${p.batch} in ${m} micro-batch(es), seq ${seq}, ${dtype}, top-${dims.topK} of ${dims.experts} experts, ${cf}`;
    return {
      check,
      report: moePipelineReport({
        title,
        timeline: pipelineTimeline(p.pp, m, measured),
        pairs: place.pipeline?.pairs ?? (() => ""),
        launches,
        sends,
        outcomes: routing.flat().map((r) => r.outcome),
        cubes: place.cubes,
      }),
    };
  },
});
