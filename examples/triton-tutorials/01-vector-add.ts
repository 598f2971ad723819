import { type DeviceTensor, defineBench } from "@kb/runtime";
import type { Dtype } from "@kb/tensor";
import type { TL } from "@kb/tl";
import * as z from "zod";
import { commonParams, firstCube, gridOf } from "../../benches/lib/params.js";
import { add } from "../../benches/lib/reference.js";

// Triton's tutorial 01 (vector addition), written with @kb/tl: one program per BLOCK_SIZE
// elements, offsets = pid * BLOCK_SIZE + arange, mask = offsets < n_elements, a masked load of x
// and of y, an add and a masked store. The last program's block runs past the vectors' end; its
// masked-off elements are neither read nor written, and its DMAs move only the elements in range.
//
// One difference from Triton: a @kb/tl load takes a block's base pointer and shape (x.at(start),
// [BLOCK_SIZE]) rather than a tensor of pointers (x_ptr + offsets); the offsets serve the mask.

/**
 * `output = x + y` for `n_elements` elements: program `pid` adds the block of `BLOCK_SIZE`
 * elements at `pid * BLOCK_SIZE`, masked to those below `n_elements`.
 */
export async function addKernel(
  tl: TL,
  x: DeviceTensor,
  y: DeviceTensor,
  output: DeviceTensor,
  n_elements: number,
  BLOCK_SIZE: number,
): Promise<void> {
  const pid = tl.programId(0);
  const block_start = pid * BLOCK_SIZE;
  const offsets = await tl.add(tl.arange(0, BLOCK_SIZE), block_start);
  const mask = await tl.lt(offsets, n_elements);
  const xs = await tl.load(x.at(block_start), [BLOCK_SIZE], x.dtype, { mask });
  const ys = await tl.load(y.at(block_start), [BLOCK_SIZE], y.dtype, { mask });
  await tl.store(output.at(block_start), await tl.add(xs, ys), { mask });
}

/** Tutorial 01: `output = x + y` on a logical grid of `cdiv(n_elements, BLOCK_SIZE)` programs. */
export default defineBench({
  name: "triton-01-vector-add",
  description:
    "Triton tutorial 01: output = x + y over n_elements, one program per BLOCK_SIZE elements on a logical grid, offsets = pid * BLOCK_SIZE + arange and a mask offsets < n_elements on the loads and the store (x, y, output in the HBM of the grid's first cube).",
  params: z.object({
    n_elements: z
      .number()
      .int()
      .positive()
      .default(98432)
      .describe("Elements of x, y and output (Triton's tutorial: 98432, not a multiple of the block)."),
    BLOCK_SIZE: z.number().int().positive().default(1024).describe("Elements per program."),
    ...commonParams,
  }),
  async run(sim, p) {
    const dtype: Dtype = p.dtype;
    const grid = gridOf(sim, p);
    const where = firstCube(grid);
    const x = sim.random([p.n_elements], dtype, { seed: p.seed });
    const y = sim.random([p.n_elements], dtype, { seed: p.seed + 1 });
    const X = await sim.toDevice(x, { ...where, name: "x" });
    const Y = await sim.toDevice(y, { ...where, name: "y" });
    const output = sim.empty([p.n_elements], dtype, { ...where, name: "output" });
    await sim.launch(addKernel, {
      grid,
      programs: [Math.ceil(p.n_elements / p.BLOCK_SIZE)],
      args: [X, Y, output, p.n_elements, p.BLOCK_SIZE],
      name: "add",
    });
    return { check: { output: { actual: output, reference: () => add(x, y, dtype) } } };
  },
});
