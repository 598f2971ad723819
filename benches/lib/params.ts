import type { Grid, GridSpec, Simulator } from "@kb/runtime";
import * as z from "zod";

/** The element types the workload benches run in. */
export const dtypeParam = z
  .enum(["f16", "bf16", "f32"])
  .default("f16")
  .describe("Element type of the inputs and outputs.");

/** The seed of the bench's random inputs (each input uses `seed + i`). */
export const seedParam = z
  .number()
  .int()
  .min(0)
  .max(2 ** 32 - 16)
  .default(1)
  .describe("Seed of the random inputs; the same seed gives the same inputs and results.");

/** `n`, the elements of a vector bench's tensors (default 2^22); `what` names the tensors. */
export function elementsParam(what: string) {
  return z
    .number()
    .int()
    .positive()
    .default(1 << 22)
    .describe(`Elements of ${what}.`);
}

const count = (what: string) =>
  z
    .number()
    .int()
    .positive()
    .optional()
    .describe(`Run on the first n ${what} of the topology (default: all).`);

/** Optional grid limits shared by every bench: the first n SIPs, cubes per SIP, PEs per cube. */
export const gridParams = {
  sips: count("SIPs"),
  cubes: count("cubes of each SIP"),
  pes: count("PEs of each cube"),
};

/** The params every single-dtype bench has: `dtype`, `seed` and the grid limits. */
export const commonParams = { dtype: dtypeParam, seed: seedParam, ...gridParams };

/** The grid params after parsing. */
export interface GridParams {
  readonly sips?: number | undefined;
  readonly cubes?: number | undefined;
  readonly pes?: number | undefined;
}

/** The launch grid of `params`: every PE of the topology unless a count limits a level. */
export function gridOf(sim: Simulator, params: GridParams): Grid {
  const spec: { -readonly [K in keyof GridSpec]: GridSpec[K] } = {};
  if (params.sips !== undefined) spec.sips = params.sips;
  if (params.cubes !== undefined) spec.cubes = params.cubes;
  if (params.pes !== undefined) spec.pes = params.pes;
  return sim.grid(spec);
}

/** The grid's first cube: where a bench whose tensors live in one cube's HBM puts them. */
export function firstCube(grid: Grid): { readonly sip: number; readonly cube: number } {
  return { sip: grid.sips[0] as number, cube: grid.cubes[0] as number };
}

/**
 * GEMM inputs are uniform in +-gemmInputRange(K) = +-sqrt(3 / sqrt(K)), so every entry of C = A @ B
 * has unit variance (K products of variance (r^2 / 3)^2), the usual scaling. It keeps the D11 f32
 * tolerance (atol 1e-5) meaningful: the error of an f32 accumulation of K terms is about
 * sqrt(K) x 6e-8 of their magnitude, 2e-6 for K = 1024, where unscaled +-1 inputs give outputs of
 * ~10 and an f32 accumulation error of ~1e-5, at the tolerance itself.
 */
export function gemmInputRange(k: number): number {
  return Math.sqrt(3 / Math.sqrt(k));
}
