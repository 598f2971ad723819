import { defineStageEngine, queueDepthParam } from "@kb/spec";
import * as z from "zod";

/** Params of `systolic_gemm` (strict: an unknown key in a topology is an error). */
export const systolicGemmParams = z.strictObject({
  rows: z
    .number()
    .int()
    .min(1)
    .default(32)
    .describe("PE rows of the array: the K extent of one weight fold."),
  cols: z
    .number()
    .int()
    .min(1)
    .default(32)
    .describe("PE columns of the array: the N extent of one weight fold."),
  freq_ghz: z.number().positive().default(1).describe("Clock, GHz."),
  overhead_cycles: z.number().int().min(0).default(8).describe("Fixed cycles per GEMM (issue and drain)."),
  queue_depth: queueDepthParam(4),
});

/** `systolic_gemm` params with defaults filled in. */
export type SystolicGemmParams = z.output<typeof systolicGemmParams>;

/**
 * Time of one `m x n x k` GEMM on a weight-stationary `rows x cols` systolic array, in ns.
 *
 * The weights are cut into `folds = ceil(k / rows) * ceil(n / cols)` tiles of `rows x cols`. Each
 * fold loads its weights (`rows` cycles), streams the `m` rows of A through the array, and fills
 * and drains the skewed wavefront (`rows + cols - 2` cycles):
 *
 * `cycles = folds * (rows + m + rows + cols - 2) + overhead_cycles`, `ns = cycles / freq_ghz`.
 *
 * Every dtype runs at one MAC per PE per cycle.
 */
export function systolicGemmNs(params: SystolicGemmParams, m: number, n: number, k: number): number {
  return systolicGemmCycles(params, m, n, k) / params.freq_ghz;
}

/** The cycles of {@link systolicGemmNs}: `folds * (rows + m + rows + cols - 2) + overhead_cycles`. */
export function systolicGemmCycles(params: SystolicGemmParams, m: number, n: number, k: number): number {
  const { rows, cols } = params;
  const folds = Math.ceil(k / rows) * Math.ceil(n / cols);
  return folds * (rows + m + rows + cols - 2) + params.overhead_cycles;
}

/**
 * The `systolic_gemm` impl of kind `pe_gemm`; in a topology: `"kb-plugin-systolic-gemm:systolic_gemm"`.
 *
 * A timing function is all it takes: the framework runs each GEMM stage on the PE's compute slot,
 * shared with PE_MATH (a GEMM and a MATH op of one PE never overlap), counts `2 m n k` flops, and,
 * from `array`, states the engine's timing (`GemmTiming` of the framework), so `kb probe` holds
 * it to this formula and `kb run` reports its array utilisation.
 */
export const systolicGemm = defineStageEngine({
  kind: "pe_gemm",
  impl: "systolic_gemm",
  description:
    "GEMM engine as a weight-stationary rows x cols systolic array: a tile takes (ceil(k/rows) * ceil(n/cols) * (rows + m + rows + cols - 2) + overhead_cycles) / freq_ghz ns (per weight fold: weight load, streaming m rows, skewed fill and drain) on the PE's shared compute slot.",
  params: systolicGemmParams,
  timing: ({ gemm }, params) => systolicGemmNs(params, gemm.m, gemm.n, gemm.k),
  array: (params) => ({ rows: params.rows, cols: params.cols, freqGhz: params.freq_ghz }),
});
