import { type DeviceTensor, defineBench } from "@kb/runtime";
import type { Dtype } from "@kb/tensor";
import type { TL } from "@kb/tl";
import * as z from "zod";
import { commonParams, elementsParam, firstCube, gridOf } from "./lib/params.js";
import { add } from "./lib/reference.js";

/**
 * Triton's vector add: program `pid` adds the block of `block` elements at `pid * block` (the
 * last block holds what is left), one load of x, one of y, an add and a store.
 */
export async function vectorAddGridKernel(
  tl: TL,
  x: DeviceTensor,
  y: DeviceTensor,
  out: DeviceTensor,
  n: number,
  block: number,
): Promise<void> {
  const pid = tl.programId(0);
  const start = pid * block;
  const count = Math.min(block, n - start);
  const xs = await tl.load(x.at(start), [count], x.dtype);
  const ys = await tl.load(y.at(start), [count], y.dtype);
  await tl.store(out.at(start), await tl.add(xs, ys));
}

/** `out = x + y` written the Triton way: a logical grid of cdiv(n, block) programs. */
export default defineBench({
  name: "vector-add-grid",
  description:
    "out = x + y elementwise over n elements, the Triton way: one block of `block` elements per program, a logical grid of cdiv(n, block) programs that the block scheduler dispatches onto the PEs (x, y and out in the HBM of the grid's first cube).",
  params: z.object({
    n: elementsParam("x, y and out"),
    block: z.number().int().positive().default(8192).describe("Elements per program (Triton's BLOCK_SIZE)."),
    ...commonParams,
  }),
  async run(sim, p) {
    const dtype: Dtype = p.dtype;
    const grid = gridOf(sim, p);
    const where = firstCube(grid);
    const x = sim.random([p.n], dtype, { seed: p.seed });
    const y = sim.random([p.n], dtype, { seed: p.seed + 1 });
    const X = await sim.toDevice(x, { ...where, name: "x" });
    const Y = await sim.toDevice(y, { ...where, name: "y" });
    const out = sim.empty([p.n], dtype, { ...where, name: "out" });
    await sim.launch(vectorAddGridKernel, {
      grid,
      programs: [Math.ceil(p.n / p.block)],
      args: [X, Y, out, p.n, p.block],
      name: "vector-add-grid",
    });
    return { check: { out: { actual: out, reference: () => add(x, y, dtype) } } };
  },
});
