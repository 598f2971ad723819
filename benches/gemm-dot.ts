import { type DeviceTensor, defineBench } from "@kb/runtime";
import type { Dtype } from "@kb/tensor";
import type { TL } from "@kb/tl";
import * as z from "zod";
import { cubeIndex, cubeParts, emptyRows, rowChecks, uploadCopies, uploadRows } from "./lib/cube-parts.js";
import { dtypeParam, gemmInputRange, gridOf, gridParams, seedParam } from "./lib/params.js";
import { matmul } from "./lib/reference.js";

/** One cube's operands: its rows of A and C, and its own copy of B. */
interface GemmPart {
  readonly A: DeviceTensor;
  readonly B: DeviceTensor;
  readonly C: DeviceTensor;
}

/** Tile sizes of the explicit GEMM. */
export interface DotTiles {
  readonly tm: number;
  readonly tn: number;
  readonly tk: number;
}

/**
 * Triton-style GEMM: the cube's output tiles go round-robin to its PEs; for each, an f32
 * accumulator gathers `tl.dot` over the K steps of A and B tiles loaded with their row stride,
 * then is cast to the output dtype and stored into C with C's row stride. Edge tiles are smaller.
 */
export async function gemmDotKernel(
  tl: TL,
  parts: readonly (GemmPart | null)[],
  tiles: DotTiles,
): Promise<void> {
  const part = parts[cubeIndex(tl)];
  if (part === null || part === undefined) return;
  const { A, B, C } = part;
  const [rows, K] = A.shape as [number, number];
  const N = B.shape[1] as number;
  const { tm, tn, tk } = tiles;
  const tilesN = tl.cdiv(N, tn);
  const count = tl.cdiv(rows, tm) * tilesN;
  for (let t = tl.programId(0); t < count; t += tl.numPrograms(0)) {
    const tileMark = tl.scratchMark();
    const i0 = Math.floor(t / tilesN) * tm;
    const j0 = (t % tilesN) * tn;
    const m = Math.min(tm, rows - i0);
    const n = Math.min(tn, N - j0);
    let acc = tl.zeros([m, n], "f32");
    for (let k0 = 0; k0 < K; k0 += tk) {
      const stepMark = tl.scratchMark();
      const k = Math.min(tk, K - k0);
      const a = await tl.load(A.at(i0, k0), [m, k], A.dtype, { stride: K });
      const b = await tl.load(B.at(k0, j0), [k, n], B.dtype, { stride: N });
      acc = await tl.dot(a, b, acc);
      tl.scratchRelease(stepMark);
    }
    const out = C.dtype === "f32" ? acc : await tl.cast(acc, C.dtype);
    await tl.store(C.at(i0, j0), out, { stride: N });
    tl.scratchRelease(tileMark);
  }
}

/**
 * `C = A @ B` with explicit tiles (`tl.load` / `tl.dot` with an accumulator / `tl.store`); the
 * data layout is the gemm bench's, with each cube's rows in whole `tm` tiles.
 */
export default defineBench({
  name: "gemm-dot",
  description:
    "C = A @ B [M, N] with explicit tiles: per output tile an f32 accumulator over tl.dot of strided A and B tile loads, cast and stored; tiles round-robin over the PEs of each cube.",
  params: z.object({
    M: z.number().int().positive().default(1024).describe("Rows of A and C."),
    N: z.number().int().positive().default(1024).describe("Columns of B and C."),
    K: z.number().int().positive().default(1024).describe("Columns of A, rows of B."),
    tm: z.number().int().positive().default(128).describe("Rows of an output tile."),
    tn: z.number().int().positive().default(128).describe("Columns of an output tile."),
    tk: z.number().int().positive().default(128).describe("K step of a tile."),
    dtype: dtypeParam,
    seed: seedParam,
    ...gridParams,
  }),
  async run(sim, p) {
    const dtype: Dtype = p.dtype;
    const grid = gridOf(sim, p);
    const range = gemmInputRange(p.K);
    const a = sim.random([p.M, p.K], dtype, { seed: p.seed, low: -range, high: range });
    const b = sim.random([p.K, p.N], dtype, { seed: p.seed + 1, low: -range, high: range });
    const parts = cubeParts(grid, p.M, p.tm);
    const As = await uploadRows(sim, a, parts, "A");
    const Bs = await uploadCopies(sim, b, parts, "B");
    const Cs = emptyRows(sim, [p.M, p.N], dtype, parts, "C");
    const args = parts.map((_, i) => {
      const [A, B, C] = [As[i], Bs[i], Cs[i]];
      return A && B && C ? { A, B, C } : null;
    });
    const tiles = { tm: p.tm, tn: p.tn, tk: p.tk };
    await sim.launch(gemmDotKernel, { grid, args: [args, tiles], name: "gemm-dot" });
    return { check: rowChecks("C", parts, Cs, (context) => matmul(a, b, dtype, context?.progress)) };
  },
});
