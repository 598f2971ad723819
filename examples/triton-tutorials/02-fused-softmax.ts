import { type DeviceTensor, defineBench } from "@kb/runtime";
import type { Dtype } from "@kb/tensor";
import type { TL } from "@kb/tl";
import * as z from "zod";
import { commonParams, firstCube, gridOf } from "../../benches/lib/params.js";
import { softmax } from "../../benches/lib/reference.js";

// Triton's tutorial 02 (fused softmax), written with @kb/tl: one program per row, the row loaded
// once into a block of BLOCK_SIZE = next_power_of_2(n_cols) elements with a mask
// col_offsets < n_cols (masked-off elements hold -inf, so they change neither the max nor the
// sum), then row - max(row), exp, a sum, a division and a masked store: the row is read from and
// written to device memory once.
//
// Differences from Triton: a load takes the row's base pointer and the block's shape
// (input.at(row_idx, 0), [BLOCK_SIZE]) rather than a tensor of pointers; the tutorial's row loop
// over a persistent grid of num_programs programs (tl.range(row_start, n_rows, row_step)) is a
// logical grid of n_rows programs here, which the runtime deals out to the PEs.

/** The smallest power of two >= n (Triton's `triton.next_power_of_2`). */
export function nextPowerOf2(n: number): number {
  let p = 1;
  while (p < n) p *= 2;
  return p;
}

/**
 * `output[row] = softmax(input[row])` for `input`, `output` `[n_rows, n_cols]` row-major: program
 * `pid` takes row `pid`, in a block of `BLOCK_SIZE >= n_cols` elements masked to the first `n_cols`.
 */
export async function softmaxKernel(
  tl: TL,
  output: DeviceTensor,
  input: DeviceTensor,
  n_cols: number,
  BLOCK_SIZE: number,
): Promise<void> {
  const row_idx = tl.programId(0);
  const col_offsets = tl.arange(0, BLOCK_SIZE);
  const mask = await tl.lt(col_offsets, n_cols);
  const row = await tl.load(input.at(row_idx, 0), [BLOCK_SIZE], input.dtype, {
    mask,
    other: Number.NEGATIVE_INFINITY,
  });
  const row_minus_max = await tl.sub(row, await tl.max(row, 0));
  const numerator = await tl.exp(row_minus_max);
  const denominator = await tl.sum(numerator, 0);
  const softmax_output = await tl.div(numerator, denominator);
  await tl.store(output.at(row_idx, 0), softmax_output, { mask });
}

/**
 * The same softmax with `ROWS` rows per program, as Triton kernels for norms and cross-entropy
 * write it: program `pid` takes rows `pid * ROWS ..` in one `[ROWS, BLOCK_SIZE]` tile, rows
 * `n_cols` elements apart (the tile is wider than the rows), masked to `rows < n_rows` and
 * `cols < n_cols`; the masked-off columns load as -inf and never move.
 */
export async function softmaxRowsKernel(
  tl: TL,
  output: DeviceTensor,
  input: DeviceTensor,
  n_rows: number,
  n_cols: number,
  BLOCK_SIZE: number,
  ROWS: number,
): Promise<void> {
  const row_start = tl.programId(0) * ROWS;
  const row_offsets = tl.expandDims(await tl.add(tl.arange(0, ROWS), row_start), 1); // [:, None]
  const col_offsets = tl.expandDims(tl.arange(0, BLOCK_SIZE), 0); // [None, :]
  const mask = await tl.and(await tl.lt(row_offsets, n_rows), await tl.lt(col_offsets, n_cols));
  const rows = await tl.load(input.at(row_start, 0), [ROWS, BLOCK_SIZE], input.dtype, {
    stride: n_cols,
    mask,
    other: Number.NEGATIVE_INFINITY,
  });
  const rows_minus_max = await tl.sub(rows, await tl.max(rows, 1));
  const numerator = await tl.exp(rows_minus_max);
  const denominator = await tl.sum(numerator, 1);
  const softmax_output = await tl.div(numerator, denominator);
  await tl.store(output.at(row_start, 0), softmax_output, { stride: n_cols, mask });
}

/** Tutorial 02: the row softmax of x `[n_rows, n_cols]` on a logical grid of `n_rows` programs. */
export default defineBench({
  name: "triton-02-fused-softmax",
  description:
    "Triton tutorial 02: y = softmax(x) along the rows of x [n_rows, n_cols], one program per row on a logical grid, the row in a block of BLOCK_SIZE = next_power_of_2(n_cols) masked to col < n_cols (other = -inf), max, exp, sum and divide fused in TCM (x, y in the HBM of the grid's first cube).",
  params: z.object({
    n_rows: z.number().int().positive().default(1823).describe("Rows of x and y (Triton's tutorial: 1823)."),
    n_cols: z
      .number()
      .int()
      .positive()
      .default(781)
      .describe("Columns of x and y, the softmax axis (Triton's tutorial: 781, not a power of two)."),
    ROWS: z
      .number()
      .int()
      .positive()
      .default(1)
      .describe(
        "Rows per program: 1 is the tutorial's 1-D block per row; more loads [ROWS, BLOCK_SIZE] tiles (rows n_cols apart, masked to rows < n_rows and cols < n_cols).",
      ),
    ...commonParams,
  }),
  async run(sim, p) {
    const dtype: Dtype = p.dtype;
    const grid = gridOf(sim, p);
    const where = firstCube(grid);
    const x = sim.random([p.n_rows, p.n_cols], dtype, { seed: p.seed, low: -4, high: 4 });
    const X = await sim.toDevice(x, { ...where, name: "x" });
    const y = sim.empty([p.n_rows, p.n_cols], dtype, { ...where, name: "y" });
    const BLOCK_SIZE = nextPowerOf2(p.n_cols);
    if (p.ROWS === 1) {
      await sim.launch(softmaxKernel, {
        grid,
        programs: [p.n_rows],
        args: [y, X, p.n_cols, BLOCK_SIZE],
        name: "softmax",
      });
    } else {
      await sim.launch(softmaxRowsKernel, {
        grid,
        programs: [Math.ceil(p.n_rows / p.ROWS)],
        args: [y, X, p.n_rows, p.n_cols, BLOCK_SIZE, p.ROWS],
        name: "softmax",
      });
    }
    return { check: { y: { actual: y, reference: () => softmax(x, dtype) } } };
  },
});
