import { type DeviceTensor, defineBench } from "@kb/runtime";
import type { Dtype } from "@kb/tensor";
import type { TL } from "@kb/tl";
import * as z from "zod";
import { cubeIndex, cubeParts, emptyRows, rowChecks, uploadRows } from "./lib/cube-parts.js";
import { dtypeParam, gridOf, gridParams, seedParam } from "./lib/params.js";
import { rowSum } from "./lib/reference.js";
import { spanOf } from "./lib/split.js";

/** One cube's rows of x `[rows, cols]` and of out `[rows, 1]`. */
interface RowSumPart {
  readonly x: DeviceTensor;
  readonly out: DeviceTensor;
}

/** Each PE sums its share of its cube's rows, `blockRows` rows per load/sum/store step. */
export async function rowSumKernel(
  tl: TL,
  parts: readonly (RowSumPart | null)[],
  blockRows: number,
): Promise<void> {
  const part = parts[cubeIndex(tl)];
  if (part === null || part === undefined) return;
  const [rows, cols] = part.x.shape as [number, number];
  const mine = spanOf(rows, tl.numPrograms(0), tl.programId(0));
  for (let done = 0; done < mine.count; done += blockRows) {
    const mark = tl.scratchMark();
    const r = mine.start + done;
    const x = await tl.load(part.x.at(r, 0), [Math.min(blockRows, mine.count - done), cols], part.x.dtype);
    await tl.store(part.out.at(r, 0), await tl.sum(x, -1));
    tl.scratchRelease(mark);
  }
}

/** `out[r] = sum of row r of x`, out `[rows, 1]`. */
export default defineBench({
  name: "row-sum",
  description:
    "out[r, 0] = sum over c of x[r, c] for x [rows, cols] (tl.sum along the last axis); rows split over every PE of the grid, blockRows rows per step.",
  params: z.object({
    rows: z.number().int().positive().default(4096).describe("Rows of x and out."),
    cols: z.number().int().positive().default(1024).describe("Columns of x (the summed axis)."),
    blockRows: z.number().int().positive().default(32).describe("Rows per load/sum/store step."),
    dtype: dtypeParam,
    seed: seedParam,
    ...gridParams,
  }),
  async run(sim, p) {
    const dtype: Dtype = p.dtype;
    const grid = gridOf(sim, p);
    const x = sim.random([p.rows, p.cols], dtype, { seed: p.seed });
    const parts = cubeParts(grid, p.rows);
    const xs = await uploadRows(sim, x, parts, "x");
    const outs = emptyRows(sim, [p.rows, 1], dtype, parts, "out");
    const args = parts.map((_, i) => {
      const [xi, out] = [xs[i], outs[i]];
      return xi && out ? { x: xi, out } : null;
    });
    await sim.launch(rowSumKernel, { grid, args: [args, p.blockRows], name: "row-sum" });
    return { check: rowChecks("out", parts, outs, () => rowSum(x, dtype)) };
  },
});
