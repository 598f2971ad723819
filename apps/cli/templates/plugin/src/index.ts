import { definePlugin, defineStageEngine, type TileWorkOf } from "@kb/spec";
import * as z from "zod";

/** Params of `big_array`, validated when a machine is built (a topology's `params:` override them). */
export const bigArrayParams = z.strictObject({
  rows: z.number().int().min(1).default(64).describe("MAC array rows."),
  cols: z.number().int().min(1).default(64).describe("MAC array columns."),
  freq_ghz: z.number().positive().default(1).describe("Clock, GHz."),
});

/** `big_array` params with their defaults filled in. */
export type BigArrayParams = z.output<typeof bigArrayParams>;

/** ns of one GEMM stage: (ceil(m / rows) x ceil(n / cols) x k + rows + cols) / freq_ghz. */
export function bigArrayNs({ gemm }: TileWorkOf<"pe_gemm">, p: BigArrayParams): number {
  const { m, n, k } = gemm;
  return (Math.ceil(m / p.rows) * Math.ceil(n / p.cols) * k + p.rows + p.cols) / p.freq_ghz;
}

/** A PE_GEMM impl; in a topology: `impl: "{{name}}:big_array"`. */
export const bigArray = defineStageEngine({
  kind: "pe_gemm",
  impl: "big_array",
  description: "Output-stationary rows x cols MAC array with a rows + cols fill and drain per GEMM.",
  params: bigArrayParams,
  timing: bigArrayNs,
  // States the array, so kb probe checks the formula and kb run reports utilisation.
  array: (p) => ({ rows: p.rows, cols: p.cols, freqGhz: p.freq_ghz }),
});

/** The plug-in: its name is the package name, which qualifies its impls. */
export default definePlugin({ meta: { name: "{{name}}", version: "0.1.0" }, components: [bigArray] });
