import { type DeviceTensor, defineBench } from "@kb/runtime";
import type { Dtype } from "@kb/tensor";
import type { TL } from "@kb/tl";
import * as z from "zod";
import { cubeIndex, cubeParts, emptyRows, rowChecks, uploadRows } from "./lib/cube-parts.js";
import { dtypeParam, gridOf, gridParams, seedParam } from "./lib/params.js";
import { softmax } from "./lib/reference.js";
import { spanOf } from "./lib/split.js";

/** One cube's rows of x and out, both `[rows, cols]`. */
interface SoftmaxPart {
  readonly x: DeviceTensor;
  readonly out: DeviceTensor;
}

/** Each PE takes the row softmax of its share of its cube's rows, `blockRows` rows per step. */
export async function softmaxKernel(
  tl: TL,
  parts: readonly (SoftmaxPart | null)[],
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
    await tl.store(part.out.at(r, 0), await tl.softmax(x, -1));
    tl.scratchRelease(mark);
  }
}

/** Row softmax of x `[rows, cols]`. */
export default defineBench({
  name: "softmax",
  description:
    "out = softmax(x) along the rows of x [rows, cols] (one tl.softmax per block of rows); rows split over every PE of the grid.",
  params: z.object({
    rows: z.number().int().positive().default(4096).describe("Rows of x and out."),
    cols: z.number().int().positive().default(1024).describe("Columns of x (the softmax axis)."),
    blockRows: z.number().int().positive().default(32).describe("Rows per load/softmax/store step."),
    dtype: dtypeParam,
    seed: seedParam,
    ...gridParams,
  }),
  async run(sim, p) {
    const dtype: Dtype = p.dtype;
    const grid = gridOf(sim, p);
    const x = sim.random([p.rows, p.cols], dtype, { seed: p.seed, low: -4, high: 4 });
    const parts = cubeParts(grid, p.rows);
    const xs = await uploadRows(sim, x, parts, "x");
    const outs = emptyRows(sim, [p.rows, p.cols], dtype, parts, "out");
    const args = parts.map((_, i) => {
      const [xi, out] = [xs[i], outs[i]];
      return xi && out ? { x: xi, out } : null;
    });
    await sim.launch(softmaxKernel, { grid, args: [args, p.blockRows], name: "softmax" });
    return { check: rowChecks("out", parts, outs, () => softmax(x, dtype)) };
  },
});
