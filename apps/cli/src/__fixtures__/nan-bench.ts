import { type DeviceTensor, defineBench } from "@kb/runtime";
import { Tensor } from "@kb/tensor";
import type { TL } from "@kb/tl";
import * as z from "zod";

/**
 * A broken `out = log(-x)`: the kernel forgets the negation, so every element is the log of a
 * negative number (NaN). Each of 2 PEs takes half the rows; `mul` by 0.5 comes first and is finite.
 */
async function brokenLog(tl: TL, x: DeviceTensor, out: DeviceTensor): Promise<void> {
  const [rows, cols] = x.shape as [number, number];
  const half = rows / 2;
  const row = tl.programId(0) * half;
  const tile = await tl.load(x.at(row, 0), [half, cols], x.dtype);
  const halved = await tl.mul(tile, 0.5);
  await tl.store(out.at(row, 0), await tl.log(halved));
}

/**
 * x = -2, -4, -6, ...; the reference is log(x / -2) = log 1, log 2, ... and the kernel's output
 * all NaN (the `--verify` NaN test).
 */
export default defineBench({
  name: "nan",
  params: z.object({
    rows: z.number().int().min(2).multipleOf(2).default(4),
    cols: z.number().int().min(1).default(8),
  }),
  async run(sim, p) {
    const size = p.rows * p.cols;
    const x = sim.fromArray(
      Array.from({ length: size }, (_, i) => -2 * (i + 1)),
      [p.rows, p.cols],
      "f32",
    );
    const src = await sim.toDevice(x, { name: "x" });
    const out = sim.empty([p.rows, p.cols], "f32", { name: "out" });
    await sim.launch(brokenLog, { grid: sim.grid({ sips: 1, cubes: 1, pes: 2 }), args: [src, out] });
    const reference = () =>
      Tensor.fromArray(
        Array.from({ length: size }, (_, i) => Math.log(i + 1)),
        [p.rows, p.cols],
        "f32",
      );
    return { check: { out: { actual: out, reference } } };
  },
});
