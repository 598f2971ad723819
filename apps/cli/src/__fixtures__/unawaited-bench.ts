import { type DeviceTensor, defineBench } from "@kb/runtime";
import type { TL } from "@kb/tl";
import * as z from "zod";

/** Copies src to dst but forgets to await the store. */
async function forgetful(tl: TL, src: DeviceTensor, dst: DeviceTensor): Promise<void> {
  const x = await tl.load(src, src.shape, src.dtype);
  tl.store(dst, x); // missing await
  await tl.load(src, src.shape, src.dtype);
}

/** A bench whose kernel forgets one await (a new user's most common mistake). */
export default defineBench({
  name: "unawaited",
  params: z.object({}),
  async run(sim) {
    const src = await sim.toDevice(sim.random([8, 8], "f32", { seed: 1 }), { name: "src" });
    const dst = sim.empty([8, 8], "f32", { name: "dst" });
    await sim.launch(forgetful, { grid: sim.grid({ sips: 1, cubes: 1, pes: 2 }), args: [src, dst] });
    return { check: { dst: { actual: dst, reference: () => sim.random([8, 8], "f32", { seed: 1 }) } } };
  },
});
