// pe_gemm_v2 against SCALE-Sim v2: the reference rows and the comparison that `pnpm bench:pe-gemm`
// prints and scalesim.test.ts asserts (the same function, so the table is what the test checks).
import { readFileSync } from "node:fs";
import {
  GEMM_DATAFLOWS,
  gemmMapping,
  gemmParams,
  macArrayCycles,
  peGemmV2Cycles,
  peGemmV2Params,
} from "@kb/builtins";
import * as z from "zod";

const rowSchema = z.object({
  array: z.string().regex(/^\d+x\d+$/),
  dataflow: z.enum(GEMM_DATAFLOWS),
  M: z.number().int().min(1),
  N: z.number().int().min(1),
  K: z.number().int().min(1),
  scalesim_cycles: z.number().int(),
  scalesim_cycles_plus1: z.number().int(),
  utilisation: z.number(),
  folds: z.tuple([z.number().int(), z.number().int()]),
  per_fold_cycles: z.number().int(),
  stall_cycles: z.number().int().optional(),
  derived_not_simulated: z.boolean().optional(),
});

/** One row of `__fixtures__/scalesim-reference.json` (see the README there). */
export type ScaleSimRow = z.output<typeof rowSchema>;

// Same relative path from perf/pe-gemm/scalesim.ts and from the bundle dist/perf/pe-gemm.js.
const REFERENCE = new URL("../../perf/pe-gemm/__fixtures__/scalesim-reference.json", import.meta.url);

/** The 66 reference rows: SCALE-Sim v2's compute cycles on 32x32 and 128x128 arrays in os, ws, is. */
export function loadScaleSimRows(): ScaleSimRow[] {
  return z.array(rowSchema).parse(JSON.parse(readFileSync(REFERENCE, "utf8")));
}

/** A reference row next to what pe_gemm_v2 (and v1) charge for it. */
export interface PeGemmComparison {
  readonly array: string;
  readonly dataflow: ScaleSimRow["dataflow"];
  readonly m: number;
  readonly n: number;
  readonly k: number;
  /** SCALE-Sim's count (`scalesim_cycles_plus1`: its report is the last cycle's index). */
  readonly scalesimCycles: number;
  /** `pe_gemm_v2` with the row's array and dataflow, `fold_overlap: false`, `overhead_cycles: 0`, f16 (1 cycle). */
  readonly v2Cycles: number;
  /** `v2Cycles - scalesimCycles`: 0 on every row. */
  readonly difference: number;
  /** v2's folds over the array's rows and columns, as SCALE-Sim's `folds`. */
  readonly folds: readonly [number, number];
  readonly scalesimFolds: readonly [number, number];
  /** `v2Cycles / folds`, as SCALE-Sim's `per_fold_cycles`. */
  readonly perFoldCycles: number;
  readonly scalesimPerFoldCycles: number;
  /** The same with `fold_overlap: true` (a stated assumption: nothing to compare it with). */
  readonly v2OverlapCycles: number;
  /** `pe_gemm_v1` with the row's array and its defaults (output stationary, `overhead_cycles` 8). */
  readonly v1Cycles: number;
  /** `MNK / (v2Cycles x R x C)`. */
  readonly utilisation: number;
  /** The one row SCALE-Sim did not simulate (derived from its formula; see the README). */
  readonly derived: boolean;
}

/** Each reference row with v2's cycles for it (f16: one cycle per MAC step). */
export function compareWithScaleSim(rows: readonly ScaleSimRow[] = loadScaleSimRows()): PeGemmComparison[] {
  return rows.map((row) => {
    const [rows, cols] = row.array.split("x").map(Number) as [number, number];
    const v2 = { mac_rows: rows, mac_cols: cols, dataflow: row.dataflow, overhead_cycles: 0 };
    const backToBack = peGemmV2Params.parse({ ...v2, fold_overlap: false });
    const overlapped = peGemmV2Params.parse({ ...v2, fold_overlap: true });
    const v1 = gemmParams.parse({ mac_rows: rows, mac_cols: cols });
    const v2Cycles = peGemmV2Cycles(backToBack, row.M, row.N, row.K, "f16");
    const mapping = gemmMapping(row.dataflow, row.M, row.N, row.K);
    const folds = [Math.ceil(mapping.rows / rows), Math.ceil(mapping.cols / cols)] as const;
    return {
      array: row.array,
      dataflow: row.dataflow,
      m: row.M,
      n: row.N,
      k: row.K,
      scalesimCycles: row.scalesim_cycles_plus1,
      v2Cycles,
      difference: v2Cycles - row.scalesim_cycles_plus1,
      folds,
      scalesimFolds: row.folds,
      perFoldCycles: v2Cycles / (folds[0] * folds[1]),
      scalesimPerFoldCycles: row.per_fold_cycles,
      v2OverlapCycles: peGemmV2Cycles(overlapped, row.M, row.N, row.K, "f16"),
      v1Cycles: macArrayCycles(v1, row.M, row.N, row.K, "f16"),
      utilisation: (row.M * row.N * row.K) / (v2Cycles * rows * cols),
      derived: row.derived_not_simulated === true,
    };
  });
}
