import { type DeviceTensor, defineBench } from "@kb/runtime";
import type { Dtype } from "@kb/tensor";
import type { TL } from "@kb/tl";
import * as z from "zod";
import { cubeIndex, cubeParts, emptyRows, rowChecks, uploadCopies, uploadRows } from "./lib/cube-parts.js";
import { dtypeParam, gemmInputRange, gridOf, gridParams, seedParam } from "./lib/params.js";
import { matmul } from "./lib/reference.js";
import { spanOf } from "./lib/split.js";

/** One cube's operands: its rows of A and C, and its own copy of B. */
interface GemmPart {
  readonly A: DeviceTensor;
  readonly B: DeviceTensor;
  readonly C: DeviceTensor;
}

/**
 * Each PE computes its share of its cube's rows of C with one composite GEMM: `C[rows] = A[rows]
 * @ B`, A and C row blocks being contiguous in the cube's HBM.
 */
export async function gemmKernel(
  tl: TL,
  parts: readonly (GemmPart | null)[],
  tile: readonly [number, number, number] | null,
): Promise<void> {
  const part = parts[cubeIndex(tl)];
  if (part === null || part === undefined) return;
  const [rows, k] = part.A.shape as [number, number];
  const n = part.B.shape[1] as number;
  const mine = spanOf(rows, tl.numPrograms(0), tl.programId(0));
  if (mine.count === 0) return;
  const a = tl.ref(part.A.at(mine.start, 0), [mine.count, k], part.A.dtype);
  const b = tl.ref(part.B, [k, n], part.B.dtype);
  const done = await tl.composite("gemm", a, b, {
    outPtr: part.C.at(mine.start, 0),
    ...(tile !== null ? { tileShape: tile } : {}),
  });
  await tl.wait(done);
}

const tileParam = z
  .tuple([z.number().int().positive(), z.number().int().positive(), z.number().int().positive()])
  .optional()
  .describe("Composite tile [tm, tn, tk] (default: the PE scheduler's tile_m/n/k).");

/**
 * `C = A @ B` with `tl.composite("gemm")`: the rows of A and C are split over the grid's cubes
 * (each cube's rows and a copy of B in its own HBM), then over the PEs of each cube.
 */
export default defineBench({
  name: "gemm",
  description:
    "C = A @ B [M, N] with one composite GEMM per PE; rows of A and C split over every PE of the grid, each cube holding its rows and a copy of B in its own HBM.",
  params: z.object({
    M: z.number().int().positive().default(1024).describe("Rows of A and C."),
    N: z.number().int().positive().default(1024).describe("Columns of B and C."),
    K: z.number().int().positive().default(1024).describe("Columns of A, rows of B."),
    dtype: dtypeParam,
    tile: tileParam,
    seed: seedParam,
    ...gridParams,
  }),
  async run(sim, p) {
    const dtype: Dtype = p.dtype;
    const grid = gridOf(sim, p);
    const range = gemmInputRange(p.K);
    const a = sim.random([p.M, p.K], dtype, { seed: p.seed, low: -range, high: range });
    const b = sim.random([p.K, p.N], dtype, { seed: p.seed + 1, low: -range, high: range });
    const parts = cubeParts(grid, p.M);
    const As = await uploadRows(sim, a, parts, "A");
    const Bs = await uploadCopies(sim, b, parts, "B");
    const Cs = emptyRows(sim, [p.M, p.N], dtype, parts, "C");
    const args = parts.map((_, i) => {
      const [A, B, C] = [As[i], Bs[i], Cs[i]];
      return A && B && C ? { A, B, C } : null;
    });
    await sim.launch(gemmKernel, { grid, args: [args, p.tile ?? null], name: "gemm" });
    return { check: rowChecks("C", parts, Cs, (context) => matmul(a, b, dtype, context?.progress)) };
  },
});
