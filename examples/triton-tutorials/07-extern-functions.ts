import { type DeviceTensor, defineBench } from "@kb/runtime";
import { type Dtype, Tensor } from "@kb/tensor";
import type { TL } from "@kb/tl";
import * as z from "zod";
import { commonParams, firstCube, gridOf } from "../../benches/lib/params.js";

// Triton's tutorial 07 (libdevice / extern functions), written with @kb/tl: y = asin(x) with
// libdevice's asin, one program per BLOCK_SIZE elements on a logical grid, masked to
// offsets < n_elements as in tutorial 01.
//
// Differences from Triton: libdevice's functions are tl calls (`tl.asin`, `tl.erfinv`, ...;
// Triton's `libdevice.asin` from `triton.language.extra`), computed in f64 and rounded once to the
// dtype, not CUDA's libdevice bitcode; a load takes the block's base pointer and shape.

/** `y = asin(x)` for `n_elements` elements: program `pid` takes the block at `pid * BLOCK_SIZE`. */
export async function asinKernel(
  tl: TL,
  x: DeviceTensor,
  y: DeviceTensor,
  n_elements: number,
  BLOCK_SIZE: number,
): Promise<void> {
  const pid = tl.programId(0);
  const block_start = pid * BLOCK_SIZE;
  const offsets = await tl.add(tl.arange(0, BLOCK_SIZE), block_start);
  const mask = await tl.lt(offsets, n_elements);
  const xs = await tl.load(x.at(block_start), [BLOCK_SIZE], x.dtype, { mask });
  await tl.store(y.at(block_start), await tl.asin(xs), { mask });
}

/** `asin(x)` elementwise in f64, rounded once to `dtype`. */
function asinReference(x: Tensor, dtype: Dtype): Tensor {
  return Tensor.fromArray(x.toFloat64Array().map(Math.asin), x.shape, dtype);
}

/** Tutorial 07: `y = asin(x)` on a logical grid of `cdiv(n_elements, BLOCK_SIZE)` programs. */
export default defineBench({
  name: "triton-07-extern-functions",
  description:
    "Triton tutorial 07: y = asin(x) with libdevice's asin (tl.asin) over n_elements, one program per BLOCK_SIZE elements on a logical grid, masked to offsets < n_elements (x, y in the HBM of the grid's first cube).",
  params: z.object({
    n_elements: z
      .number()
      .int()
      .positive()
      .default(98432)
      .describe("Elements of x and y (Triton's tutorial: 98432)."),
    BLOCK_SIZE: z.number().int().positive().default(1024).describe("Elements per program (Triton's: 1024)."),
    ...commonParams,
  }),
  async run(sim, p) {
    const dtype: Dtype = p.dtype;
    const grid = gridOf(sim, p);
    const where = firstCube(grid);
    // torch.rand: uniform in [0, 1).
    const x = sim.random([p.n_elements], dtype, { seed: p.seed, low: 0, high: 1 });
    const X = await sim.toDevice(x, { ...where, name: "x" });
    const y = sim.empty([p.n_elements], dtype, { ...where, name: "y" });
    await sim.launch(asinKernel, {
      grid,
      programs: [Math.ceil(p.n_elements / p.BLOCK_SIZE)],
      args: [X, y, p.n_elements, p.BLOCK_SIZE],
      name: "asin",
    });
    return { check: { y: { actual: y, reference: () => asinReference(x, dtype) } } };
  },
});
