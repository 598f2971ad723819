import { KbError } from "@kb/errors";
import { dataFileParam, defineBench } from "@kb/runtime";
import type { Dtype } from "@kb/tensor";
import * as z from "zod";
import { type LayerDims, PRESETS, type PresetName, rankDims } from "./lib/llm/config.js";
import { lazyWeights } from "./lib/llm/layer-params.js";
import { placeRanks } from "./lib/llm/ranks.js";
import { dtypeParam, gridParams, seedParam } from "./lib/params.js";
import { StepModelRunner } from "./lib/serve/model.js";
import { readTraceFile } from "./lib/serve/node/trace-file.js";
import { serveReport } from "./lib/serve/report.js";
import { runScheduler, type ServeRequest } from "./lib/serve/scheduler.js";
import { generateTrace } from "./lib/serve/trace.js";

const positive = (fallback: number, text: string) =>
  z.number().int().positive().default(fallback).describe(text);

/**
 * A serving loop over a request trace: continuous batching with chunked prefill over a paged KV
 * cache (lib/serve/scheduler.ts), each step's batch run on the Llama layers of lib/llm, so a
 * step's time is the kernels' simulated time; per-request TTFT, TPOT and end-to-end latency with
 * p50 / p90 / p99, throughput, and the KV cache's occupancy and the batch over time.
 */
export default defineBench({
  name: "llama-serve",
  description:
    "A serving loop: requests from a JSON-lines trace or a seeded Poisson generator, continuous batching with chunked prefill, a paged KV cache (blocks allocated on admission and growth, freed on completion, recompute preemption of the newest sequence when full), each step's batch run on the Llama layers' tl kernels; TTFT, TPOT and end-to-end latency p50/p90/p99, throughput, KV-cache occupancy and batch size over time.",
  params: z.object({
    // A data file: its bytes are in the run's manifest, so --cache and sweeps see an edited trace.
    trace: dataFileParam(
      'A JSON-lines trace file inside the folder kb runs in, one request a line: {"arrival_ns": 0, "prompt_tokens": 64, "output_tokens": 16}; default: generated (requests, rate, lengths, seed).',
    ).optional(),
    requests: positive(100, "Requests generated (without trace)."),
    rate: z
      .number()
      .positive()
      .default(20000)
      .describe("Mean arrivals per second of simulated time (Poisson)."),
    promptMin: positive(16, "Shortest generated prompt (lengths uniform in [promptMin, promptMax])."),
    promptMax: positive(128, "Longest generated prompt."),
    outputMin: positive(4, "Fewest generated output tokens (uniform in [outputMin, outputMax])."),
    outputMax: positive(32, "Most generated output tokens."),
    maxBatchTokens: positive(256, "Tokens a step computes at most: its decodes and prefill chunks."),
    chunk: positive(64, "Largest prefill chunk of one request in one step (chunked prefill)."),
    blockTokens: positive(16, "Tokens per KV-cache block."),
    kvBlocks: positive(64, "Blocks of the KV cache, all sequences together."),
    stepModel: z
      .enum(["simulate", "cached"])
      .optional()
      .describe(
        "simulate: run every step's kernels; cached: run each padded step shape once and reuse its time for the same shape later. Default: simulate for tiny, cached for the others.",
      ),
    checkShapes: positive(4, "--verify checks the outputs of the first this many step shapes."),
    preset: z
      .enum(Object.keys(PRESETS) as [PresetName, ...PresetName[]])
      .default("tiny")
      .describe("Layer dimensions: tiny (verifies in seconds), llama3-8b, llama3-70b."),
    layers: positive(1, "Layers each step runs (the step's time is theirs)."),
    tp: z
      .union([z.literal("auto"), z.number().int().positive()])
      .default("auto")
      .describe("Tensor-parallel ranks (cubes), as llama-layer's tp."),
    dtype: dtypeParam,
    seed: seedParam,
    ...gridParams,
  }),
  async run(sim, p) {
    const dims: LayerDims = PRESETS[p.preset];
    const dtype: Dtype = p.dtype;
    if (dims.headDim % 2 !== 0) {
      throw new KbError("RUNTIME_INVALID", `llama-serve: headDim (${dims.headDim}) must be even for RoPE.`);
    }
    const requests: ServeRequest[] =
      p.trace === undefined
        ? generateTrace({
            requests: p.requests,
            rate: p.rate,
            seed: p.seed,
            promptMin: p.promptMin,
            promptMax: p.promptMax,
            outputMin: p.outputMin,
            outputMax: p.outputMax,
          })
        : readTraceFile(p.trace);
    const placement = placeRanks(sim, p, p.tp, dims.kvHeads);
    rankDims(dims, placement.ranks.length);
    const mode = p.stepModel ?? (p.preset === "tiny" ? "simulate" : "cached");
    const config = {
      maxBatchTokens: p.maxBatchTokens,
      chunk: p.chunk,
      blockTokens: p.blockTokens,
      kvBlocks: p.kvBlocks,
    };
    const runner = new StepModelRunner(sim, {
      dims,
      dtype,
      placement,
      weights: lazyWeights(sim, dims, dtype, p.seed),
      layers: p.layers,
      plan: { tiles: { tm: 128, tn: 128, tk: 128 }, block: 128, blockRows: 4 },
      blockTokens: p.blockTokens,
      mode,
      seed: p.seed,
    });
    let finished = 0;
    const run = await runScheduler(
      requests,
      config,
      (plan) => {
        sim.progress(finished, requests.length, `step ${plan.index + 1}: ${plan.items.length} sequence(s)`);
        return runner.time(plan);
      },
      (step) => {
        finished += step.finished.length;
      },
    );
    const where = placement.ranks.map((rank) => `sip${rank.sip}.cube${rank.cube}`).join(" ");
    const source =
      p.trace === undefined
        ? `${p.requests} generated requests (Poisson ${p.rate}/s, seed ${p.seed})`
        : `trace ${p.trace}`;
    const title = `llama-serve: ${source}; ${p.preset}, ${p.layers} layer(s), ${dtype}, tp ${placement.ranks.length} (${where}); maxBatchTokens ${p.maxBatchTokens}, chunk ${p.chunk}, KV ${p.kvBlocks} blocks x ${p.blockTokens} tokens; step model ${mode} (${runner.simulated} part(s) simulated, ${runner.reused} reused)`;
    return {
      check: runner.checks(p.checkShapes),
      report: serveReport(title, run, p.kvBlocks, runner.boundNs),
    };
  },
});
