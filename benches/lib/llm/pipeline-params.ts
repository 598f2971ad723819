import * as z from "zod";

/** The params of a pipeline over layers and micro-batches (llama-pp's and moe-pp's). */
export const pipelineParams = {
  pp: z
    .number()
    .int()
    .positive()
    .default(2)
    .describe("Pipeline stages (a SIP each, or a cube each on one SIP)."),
  layers: z
    .number()
    .int()
    .positive()
    .default(2)
    .describe("Layers of the model, divided evenly among the stages."),
  batch: z
    .number()
    .int()
    .positive()
    .default(2)
    .describe("Sequences, divided evenly among the micro-batches."),
  microBatches: z.number().int().positive().default(2).describe("Micro-batches (m) the batch is split into."),
};
