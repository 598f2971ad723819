import { defineStageEngine, type EnergyTable, queueDepthParam } from "@kb/spec";
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

/** mW per PE of the array while it works (clock tree and pipeline registers), at 45 nm and 0.9 V. */
const BUSY_MW_PER_PE = 0.001;
/** mW of leakage per PE of the array, at 45 nm and 0.9 V. */
const LEAK_MW_PER_PE = 0.0005;

/**
 * The array's own energy table (docs/energy.md), in place of the built-in PE_GEMM table: one cost
 * per MAC whatever the dtype (the array runs every dtype at one MAC per PE per cycle, as its
 * timing), the array's clock and registers while busy, and its leakage, both in proportion to
 * `rows x cols`. Stated at Horowitz's 45 nm and 0.9 V: a run scales them to its topology's
 * `energy.process_nm` and `vdd_v`, and `energy.costs["kb-plugin-systolic-gemm:systolic_gemm"]` (or `pe_gemm`) replaces them.
 */
export const systolicGemmEnergy: EnergyTable = {
  node: { process_nm: 45, vdd_v: 0.9 },
  costs: [
    {
      name: "mac_pj",
      per: "macs",
      value: 1.5,
      description: "One MAC, any dtype: the array runs every dtype at one MAC per PE per cycle.",
      source:
        "Horowitz, 'Computing's energy problem', ISSCC 2014 (45 nm): 16-bit FP multiply 1.1 + add 0.4 pJ",
    },
    {
      name: "array_busy_mw",
      per: "busy_ns",
      value: BUSY_MW_PER_PE * 32 * 32,
      description:
        "Clock tree and pipeline registers of the array while it works: 0.001 mW per PE x rows x cols.",
      source:
        "assumption: about two thirds of a MAC's energy per cycle at 1 GHz goes to the registers a weight-stationary PE clocks",
    },
    {
      name: "static_mw",
      per: "time_ns",
      value: LEAK_MW_PER_PE * 32 * 32,
      description: "Leakage of the array: 0.0005 mW per PE x rows x cols.",
      source: "assumption: as the built-in PE_GEMM table's leakage per MAC cell",
    },
  ],
  values: (params) => {
    const { rows, cols } = params as SystolicGemmParams;
    return { array_busy_mw: BUSY_MW_PER_PE * rows * cols, static_mw: LEAK_MW_PER_PE * rows * cols };
  },
};

/**
 * The `systolic_gemm` impl of kind `pe_gemm`; in a topology: `"kb-plugin-systolic-gemm:systolic_gemm"`.
 *
 * A timing function is all it takes: the framework runs each GEMM stage on the PE's compute slot,
 * shared with PE_MATH (a GEMM and a MATH op of one PE never overlap), counts `2 m n k` flops, and,
 * from `array`, states the engine's timing (`GemmTiming` of the framework), so `kb probe` holds
 * it to this formula and `kb run` reports its array utilisation. Its energy is its own table,
 * {@link systolicGemmEnergy} (`kb components list --plugin kb-plugin-systolic-gemm` shows it).
 */
export const systolicGemm = defineStageEngine({
  kind: "pe_gemm",
  impl: "systolic_gemm",
  description:
    "GEMM engine as a weight-stationary rows x cols systolic array: a tile takes (ceil(k/rows) * ceil(n/cols) * (rows + m + rows + cols - 2) + overhead_cycles) / freq_ghz ns (per weight fold: weight load, streaming m rows, skewed fill and drain) on the PE's shared compute slot.",
  params: systolicGemmParams,
  timing: ({ gemm }, params) => systolicGemmNs(params, gemm.m, gemm.n, gemm.k),
  array: (params) => ({ rows: params.rows, cols: params.cols, freqGhz: params.freq_ghz }),
  energy: systolicGemmEnergy,
});
