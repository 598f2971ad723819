import { type DeviceTensor, defineBench } from "@kb/runtime";
import type { Dtype } from "@kb/tensor";
import type { TL } from "@kb/tl";
import * as z from "zod";
import { cubeIndex, cubeParts, emptyRows, rowChecks, uploadRows } from "./lib/cube-parts.js";
import { dtypeParam, gridOf, gridParams, seedParam } from "./lib/params.js";
import { exp } from "./lib/reference.js";
import { spanOf } from "./lib/split.js";

/** One cube's slices of x and out. */
interface ExpPart {
  readonly x: DeviceTensor;
  readonly out: DeviceTensor;
}

/** Each PE takes `exp` of its contiguous share of its cube's elements, `chunk` at a time. */
export async function expKernel(tl: TL, parts: readonly (ExpPart | null)[], chunk: number): Promise<void> {
  const part = parts[cubeIndex(tl)];
  if (part === null || part === undefined) return;
  const mine = spanOf(part.x.size, tl.numPrograms(0), tl.programId(0));
  for (let done = 0; done < mine.count; done += chunk) {
    const mark = tl.scratchMark();
    const i = mine.start + done;
    const x = await tl.load(part.x.at(i), [Math.min(chunk, mine.count - done)], part.x.dtype);
    await tl.store(part.out.at(i), await tl.exp(x));
    tl.scratchRelease(mark);
  }
}

/** `out = exp(x)` over n elements in [-4, 4] (no f16 overflow: e^4 < 55). */
export default defineBench({
  name: "exp",
  description:
    "out = exp(x) elementwise over n elements drawn from [-4, 4]; each cube holds its slice, each PE works through its share in chunks.",
  params: z.object({
    n: z
      .number()
      .int()
      .positive()
      .default(1 << 22)
      .describe("Elements of x and out."),
    chunk: z.number().int().positive().default(8192).describe("Elements per load/exp/store step."),
    dtype: dtypeParam,
    seed: seedParam,
    ...gridParams,
  }),
  async run(sim, p) {
    const dtype: Dtype = p.dtype;
    const grid = gridOf(sim, p);
    const x = sim.random([p.n], dtype, { seed: p.seed, low: -4, high: 4 });
    const parts = cubeParts(grid, p.n);
    const xs = await uploadRows(sim, x, parts, "x");
    const outs = emptyRows(sim, [p.n], dtype, parts, "out");
    const args = parts.map((_, i) => {
      const [xi, out] = [xs[i], outs[i]];
      return xi && out ? { x: xi, out } : null;
    });
    await sim.launch(expKernel, { grid, args: [args, p.chunk], name: "exp" });
    return { check: rowChecks("out", parts, outs, () => exp(x, dtype)) };
  },
});
