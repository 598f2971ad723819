import { type DeviceTensor, defineBench } from "@kb/runtime";
import type { TL } from "@kb/tl";
import * as z from "zod";

/** Copies `src` to `dst` through the PE's TCM: one load, one store. */
async function copy(tl: TL, src: DeviceTensor, dst: DeviceTensor): Promise<void> {
  const tile = await tl.load(src, src.shape, src.dtype);
  await tl.store(dst, tile);
}

/** A rows x cols tensor copied on one PE (the `kb run` tests' bench). */
export default defineBench({
  name: "copy",
  description: "Copies a rows x cols tensor from HBM to HBM on one PE.",
  params: z.object({
    rows: z.number().int().min(1).default(64),
    cols: z.number().int().min(1).default(64),
    dtype: z.enum(["f16", "bf16", "f32"]).default("f16"),
  }),
  async run(sim, p) {
    const a = sim.random([p.rows, p.cols], p.dtype, { seed: 1 });
    const src = await sim.toDevice(a, { name: "src" });
    const dst = sim.empty([p.rows, p.cols], p.dtype, { name: "dst" });
    await sim.launch(copy, { grid: sim.grid({ sips: 1, cubes: 1, pes: 1 }), args: [src, dst] });
    return { check: { dst: { actual: dst, reference: () => a } } };
  },
});
