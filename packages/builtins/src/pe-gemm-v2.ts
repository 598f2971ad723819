import { defineComponent } from "@kb/components";
import { queueDepthParam } from "@kb/spec";
import * as z from "zod";
import { dtypeCyclesParam, MacArrayGemm } from "./mac-array-gemm.js";

/** The dataflows of `pe_gemm_v2`: what stays in the array while the third dimension streams. */
export const GEMM_DATAFLOWS = ["os", "ws", "is"] as const;

/** `os` (output stationary), `ws` (weight stationary), `is` (input stationary). */
export type GemmDataflow = (typeof GEMM_DATAFLOWS)[number];

export const peGemmV2Params = z.strictObject({
  mac_rows: z.number().int().min(1).default(32).describe("Systolic array rows (R)."),
  mac_cols: z.number().int().min(1).default(32).describe("Systolic array columns (C)."),
  dataflow: z
    .enum(GEMM_DATAFLOWS)
    .default("os")
    .describe(
      "What stays in the array: os (outputs: M on rows, N on columns, K streamed), ws (weights: K on rows, N on columns, M streamed), is (inputs: K on rows, M on columns, N streamed).",
    ),
  fold_overlap: z
    .boolean()
    .default(false)
    .describe(
      "false: folds run back to back, each with its own preload, fill and drain (as SCALE-Sim); true: the next fold's stationary operand loads while the current one streams and its fill overlaps the current one's drain, so each fold after the first adds max(stream, preload) cycles.",
    ),
  dtype_cycles: dtypeCyclesParam(
    "Cycles per MAC step by input dtype, scaling the streamed dimension (f32 streams at a quarter rate).",
  ),
  overhead_cycles: z
    .number()
    .int()
    .min(0)
    .default(0)
    .describe("Fixed cycles per GEMM besides preload, fill and drain, which the formula counts (issue)."),
  freq_ghz: z.number().positive().default(1).describe("Clock, GHz."),
  queue_depth: queueDepthParam(4),
});

/** `pe_gemm_v2` params with defaults filled in. */
export type PeGemmV2Params = z.output<typeof peGemmV2Params>;

/** Which GEMM dimension a dataflow puts on the array's rows and columns and which it streams. */
export interface GemmMapping {
  readonly rows: number;
  readonly cols: number;
  readonly stream: number;
}

/**
 * The dimensions of C[m x n] = A[m x k] B[k x n] on the array in `dataflow`: os puts (m, n) on
 * (rows, columns) and streams k; ws puts (k, n) and streams m; is puts (k, m) and streams n.
 */
export function gemmMapping(dataflow: GemmDataflow, m: number, n: number, k: number): GemmMapping {
  if (dataflow === "os") return { rows: m, cols: n, stream: k };
  if (dataflow === "ws") return { rows: k, cols: n, stream: m };
  return { rows: k, cols: m, stream: n };
}

/**
 * `pe_gemm_v2`'s cycles for one `m x n x k` GEMM of input dtype `dtype` on an `R x C` systolic
 * array (R = mac_rows, C = mac_cols), closed form, from the dataflow's mapping ({@link gemmMapping}):
 *
 * ```
 * folds   = ceil(rows / R) x ceil(cols / C)          a partial fold costs a full one
 * preload = 0 (os) | R (ws, is)                      the stationary operand enters through the rows
 * stream  = stream_dim x dtype_cycles[dtype]
 * fold    = preload + stream + R + C - 2             R + C - 2: the skewed wavefront's fill and drain
 * cycles  = folds x fold + overhead_cycles                               fold_overlap false
 *         = fold + (folds - 1) x max(stream, preload) + overhead_cycles  fold_overlap true
 * ```
 *
 * With `fold_overlap: false`, `overhead_cycles: 0` and a 1-cycle dtype this is SCALE-Sim v2's
 * compute cycle count (its `systolic_compute_{os,ws,is}.py`; reported there one less).
 */
export function peGemmV2Cycles(
  params: PeGemmV2Params,
  m: number,
  n: number,
  k: number,
  dtype: string,
): number {
  const arrayRows = params.mac_rows;
  const arrayCols = params.mac_cols;
  let rows: number;
  let cols: number;
  let stream: number;
  let preload = arrayRows;
  // Inline rather than gemmMapping(): this runs once per GEMM tile.
  if (params.dataflow === "os") {
    rows = m;
    cols = n;
    stream = k;
    preload = 0;
  } else if (params.dataflow === "ws") {
    rows = k;
    cols = n;
    stream = m;
  } else {
    rows = k;
    cols = m;
    stream = n;
  }
  const folds = Math.ceil(rows / arrayRows) * Math.ceil(cols / arrayCols);
  const streamCycles = stream * (params.dtype_cycles[dtype] ?? 1);
  const fold = preload + streamCycles + arrayRows + arrayCols - 2;
  const cycles =
    params.fold_overlap && folds > 0 ? fold + (folds - 1) * Math.max(streamCycles, preload) : folds * fold;
  return cycles + params.overhead_cycles;
}

/** PE_GEMM v2: a systolic array in one of three dataflows, with preload, fill and drain per fold. @internal */
export class PeGemmV2 extends MacArrayGemm<PeGemmV2Params> {
  gemmCycles(m: number, n: number, k: number, dtype: string): number {
    return peGemmV2Cycles(this.params, m, n, k, dtype);
  }
}

export const peGemmV2 = defineComponent({
  kind: "pe_gemm",
  impl: "pe_gemm_v2",
  analytic: true,
  description:
    "GEMM engine: a mac_rows x mac_cols systolic array, output, weight or input stationary (dataflow); per fold of the stationary dimensions a preload (ws, is: R cycles), the streamed dimension x dtype_cycles and R + C - 2 of fill and drain, folds back to back (SCALE-Sim's count) or overlapped (fold_overlap), + overhead_cycles, over freq_ghz, on the PE's shared compute slot.",
  params: peGemmV2Params,
  create: (context, params) => new PeGemmV2(context, params),
});
