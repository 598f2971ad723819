import { type DeviceTensor, defineBench } from "@kb/runtime";
import type { Dtype } from "@kb/tensor";
import type { TL } from "@kb/tl";
import * as z from "zod";
import { cubeIndex, cubeParts, emptyRows, rowChecks, uploadRows } from "./lib/cube-parts.js";
import { dtypeParam, gridOf, gridParams, seedParam } from "./lib/params.js";
import { add } from "./lib/reference.js";
import { spanOf } from "./lib/split.js";

/** One cube's slices of x, y and out. */
interface AddPart {
  readonly x: DeviceTensor;
  readonly y: DeviceTensor;
  readonly out: DeviceTensor;
}

/**
 * Each PE adds its contiguous share of its cube's elements, `chunk` elements at a time (load x,
 * load y, add, store), releasing the chunk's scratch before the next.
 */
export async function vectorAddKernel(
  tl: TL,
  parts: readonly (AddPart | null)[],
  chunk: number,
): Promise<void> {
  const part = parts[cubeIndex(tl)];
  if (part === null || part === undefined) return;
  const mine = spanOf(part.x.size, tl.numPrograms(0), tl.programId(0));
  for (let done = 0; done < mine.count; done += chunk) {
    const mark = tl.scratchMark();
    const i = mine.start + done;
    const n = Math.min(chunk, mine.count - done);
    const x = await tl.load(part.x.at(i), [n], part.x.dtype);
    const y = await tl.load(part.y.at(i), [n], part.y.dtype);
    const sum = await tl.add(x, y);
    await tl.store(part.out.at(i), sum);
    tl.scratchRelease(mark);
  }
}

/** `out = x + y` over vectors of n elements split over every PE of the grid. */
export default defineBench({
  name: "vector-add",
  description:
    "out = x + y elementwise over n elements: each cube holds its slice of x, y and out; each PE adds its share in chunks (load, load, add, store).",
  params: z.object({
    n: z
      .number()
      .int()
      .positive()
      .default(1 << 22)
      .describe("Elements of x, y and out."),
    chunk: z.number().int().positive().default(8192).describe("Elements per load/add/store step."),
    dtype: dtypeParam,
    seed: seedParam,
    ...gridParams,
  }),
  async run(sim, p) {
    const dtype: Dtype = p.dtype;
    const grid = gridOf(sim, p);
    const x = sim.random([p.n], dtype, { seed: p.seed });
    const y = sim.random([p.n], dtype, { seed: p.seed + 1 });
    const parts = cubeParts(grid, p.n);
    const xs = await uploadRows(sim, x, parts, "x");
    const ys = await uploadRows(sim, y, parts, "y");
    const outs = emptyRows(sim, [p.n], dtype, parts, "out");
    const args = parts.map((_, i) => {
      const [xi, yi, out] = [xs[i], ys[i], outs[i]];
      return xi && yi && out ? { x: xi, y: yi, out } : null;
    });
    await sim.launch(vectorAddKernel, { grid, args: [args, p.chunk], name: "vector-add" });
    return { check: rowChecks("out", parts, outs, () => add(x, y, dtype)) };
  },
});
