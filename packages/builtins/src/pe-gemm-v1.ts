import { defineComponent } from "@kb/components";
import { queueDepthParam } from "@kb/spec";
import * as z from "zod";
import { dtypeCyclesParam, MacArrayGemm } from "./mac-array-gemm.js";

export const gemmParams = z.strictObject({
  freq_ghz: z.number().positive().default(1).describe("Clock, GHz."),
  mac_rows: z.number().int().min(1).default(32).describe("MAC array rows (output rows per pass)."),
  mac_cols: z.number().int().min(1).default(32).describe("MAC array columns (output columns per pass)."),
  overhead_cycles: z.number().int().min(0).default(8).describe("Fixed cycles per GEMM (issue and drain)."),
  dtype_cycles: dtypeCyclesParam(
    "Cycles per MAC step by input dtype, relative to one pass (f32 runs at a quarter rate).",
  ),
  queue_depth: queueDepthParam(4),
});

/**
 * `pe_gemm_v1`'s cycles for one `m x n x k` GEMM: `ceil(m/rows) * ceil(n/cols) * k * rate(dtype) +
 * overhead`. No fill, skew or drain: the optimistic bound of an output-stationary array (a fold
 * streams its `k` steps back to back with the next); `pe_gemm_v2` counts them.
 */
export function macArrayCycles(
  params: z.output<typeof gemmParams>,
  m: number,
  n: number,
  k: number,
  dtype: string,
): number {
  const rate = params.dtype_cycles[dtype] ?? 1;
  return Math.ceil(m / params.mac_rows) * Math.ceil(n / params.mac_cols) * k * rate + params.overhead_cycles;
}

/** The built-in MAC-array timing: `(ceil(m/rows) * ceil(n/cols) * k * rate(dtype) + overhead) / freq` ns. */
export function macArrayNs(
  params: z.output<typeof gemmParams>,
  m: number,
  n: number,
  k: number,
  dtype: string,
): number {
  return macArrayCycles(params, m, n, k, dtype) / params.freq_ghz;
}

/** PE_GEMM v1: output-stationary MAC array timing without fill or drain (an optimistic bound). @internal */
export class PeGemmV1 extends MacArrayGemm<z.output<typeof gemmParams>> {
  gemmCycles(m: number, n: number, k: number, dtype: string): number {
    return macArrayCycles(this.params, m, n, k, dtype);
  }
}

export const peGemmV1 = defineComponent({
  kind: "pe_gemm",
  impl: "pe_gemm_v1",
  analytic: true,
  description:
    "GEMM engine: an output-stationary mac_rows x mac_cols MAC array; a tile takes (ceil(m/rows) * ceil(n/cols) * k * dtype_cycles + overhead_cycles) / freq_ghz ns on the PE's shared compute slot. No fill, skew or drain: an optimistic bound (pe_gemm_v2 counts them).",
  params: gemmParams,
  create: (context, params) => new PeGemmV1(context, params),
});
