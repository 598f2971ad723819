import { type DeviceTensor, defineBench } from "@kb/runtime";
import type { TL } from "@kb/tl";
import * as z from "zod";

/** Loads its input, then fails the way a buggy kernel does. */
async function explode(tl: TL, src: DeviceTensor): Promise<void> {
  await tl.load(src, src.shape, src.dtype);
  throw new Error("boom");
}

/** A bench whose kernel throws (on PE 1 of cube 0). */
export default defineBench({
  name: "explode",
  params: z.object({}),
  async run(sim) {
    const src = await sim.toDevice(sim.random([8, 8], "f16", { seed: 1 }));
    await sim.launch(explode, { grid: sim.grid({ sips: 1, cubes: 1, pes: [1] }), args: [src] });
  },
});
