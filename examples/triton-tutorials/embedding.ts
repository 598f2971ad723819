import { type DeviceTensor, defineBench } from "@kb/runtime";
import { type Dtype, Tensor } from "@kb/tensor";
import type { TL } from "@kb/tl";
import * as z from "zod";
import { commonParams, firstCube, gridOf } from "../../benches/lib/params.js";

// An embedding lookup as a Triton user writes it (a gather by ids, not one of Triton's numbered
// tutorials): program `pid` takes BLOCK_N ids, loads them, clamps them to the table's rows, and
// gathers rows `ids[:, None] * D + offs_d[None, :]` of the weight table, then stores the block of
// the output through offsets too (a scatter whose rows happen to be consecutive). The ids are
// loaded data: phase 1 evaluates the integer index arithmetic on them, so it knows which bytes
// each gather moves, and `--check-phases` compares every gathered tile with phase 2.
//
//   offs_n = pid * BLOCK_N + tl.arange(0, BLOCK_N); mask_n = offs_n < n_ids
//   ids = tl.load(ids_ptr + offs_n, mask=mask_n, other=0)
//   ids = tl.minimum(tl.maximum(ids, 0), V - 1)
//   offs_d = tl.arange(0, BLOCK_D); mask = mask_n[:, None] & (offs_d < D)[None, :]
//   x = tl.load(weight_ptr + ids[:, None] * D + offs_d[None, :], mask=mask)
//   tl.store(out_ptr + offs_n[:, None] * D + offs_d[None, :], x, mask=mask)

/** `out[i, :] = weight[clamp(ids[i], 0, V - 1), :]` for the block of `BLOCK_N` ids of program `pid`. */
export async function embeddingKernel(
  tl: TL,
  ids_ptr: DeviceTensor,
  weight: DeviceTensor,
  out: DeviceTensor,
  n_ids: number,
  V: number,
  D: number,
  BLOCK_N: number,
  BLOCK_D: number,
): Promise<void> {
  const pid = tl.programId(0);
  const offs_n = await tl.add(tl.arange(0, BLOCK_N), pid * BLOCK_N);
  const mask_n = await tl.lt(offs_n, n_ids);
  const loaded = await tl.load(ids_ptr, [BLOCK_N], "i32", { offsets: offs_n, mask: mask_n, other: 0 });
  const ids = await tl.clamp(loaded, 0, V - 1);
  const offs_d = tl.reshape(tl.arange(0, BLOCK_D), [1, BLOCK_D]);
  const mask = await tl.and(tl.expandDims(mask_n, 1), await tl.lt(offs_d, D));
  const rows = await tl.add(await tl.mul(tl.expandDims(ids, 1), D), offs_d);
  const x = await tl.load(weight, [BLOCK_N, BLOCK_D], weight.dtype, { offsets: rows, mask });
  const outOffs = await tl.add(await tl.mul(tl.expandDims(offs_n, 1), D), offs_d);
  await tl.store(out, x, { offsets: outOffs, mask });
}

/** `n` ids in `[-2, V + 2)` (a few out of range, clamped by the kernel), from `seed`. */
export function embeddingIds(n: number, V: number, seed: number): number[] {
  let state = (seed * 2654435761 + 1) >>> 0;
  return Array.from({ length: n }, () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return (state % (V + 4)) - 2;
  });
}

/** The host reference: row `clamp(ids[i])` of `weight` `[V, D]` for each id. */
export function embeddingReference(weight: Tensor, ids: readonly number[], V: number, D: number): Tensor {
  const values = weight.toFloat64Array();
  const out: number[] = [];
  for (const id of ids) {
    const row = Math.min(Math.max(id, 0), V - 1);
    for (let d = 0; d < D; d++) out.push(values[row * D + d] as number);
  }
  return Tensor.fromArray(out, [ids.length, D], weight.dtype);
}

/** An embedding lookup: `out[i, :] = weight[ids[i], :]`, gathered by ids on a logical grid. */
export default defineBench({
  name: "triton-embedding",
  description:
    "An embedding lookup as a Triton user writes it: one program per BLOCK_N ids, the ids loaded and clamped to [0, V), rows of the weight table gathered through ids[:, None] * D + offs_d (tl.load with offsets) and stored through offsets (weight, ids, out in the HBM of the grid's first cube).",
  params: z.object({
    n_ids: z.number().int().positive().default(1000).describe("Ids looked up (rows of out)."),
    V: z.number().int().positive().default(512).describe("Rows of the weight table (vocabulary size)."),
    D: z.number().int().positive().default(96).describe("Columns of the weight table (embedding size)."),
    BLOCK_N: z.number().int().positive().default(32).describe("Ids per program."),
    BLOCK_D: z
      .number()
      .int()
      .positive()
      .default(128)
      .describe("Columns per block (next_power_of_2(D), masked to D)."),
    ...commonParams,
  }),
  async run(sim, p) {
    const dtype: Dtype = p.dtype;
    if (p.BLOCK_D < p.D) {
      throw new RangeError(
        `triton-embedding: BLOCK_D (${p.BLOCK_D}) must be at least D (${p.D}): one block holds a row.`,
      );
    }
    const grid = gridOf(sim, p);
    const where = firstCube(grid);
    const weight = sim.random([p.V, p.D], dtype, { seed: p.seed });
    const ids = embeddingIds(p.n_ids, p.V, p.seed);
    const W = await sim.toDevice(weight, { ...where, name: "weight" });
    const IDS = await sim.toDevice(Tensor.fromArray(ids, [p.n_ids], "i32"), { ...where, name: "ids" });
    const out = sim.empty([p.n_ids, p.D], dtype, { ...where, name: "out" });
    await sim.launch(embeddingKernel, {
      grid,
      programs: [Math.ceil(p.n_ids / p.BLOCK_N)],
      args: [IDS, W, out, p.n_ids, p.V, p.D, p.BLOCK_N, p.BLOCK_D],
      name: "embedding",
    });
    return { check: { out: { actual: out, reference: () => embeddingReference(weight, ids, p.V, p.D) } } };
  },
});
