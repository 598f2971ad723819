import { type DeviceTensor, defineBench } from "@kb/runtime";
import type { TL } from "@kb/tl";
import * as z from "zod";

async function copy(tl: TL, src: DeviceTensor, dst: DeviceTensor): Promise<void> {
  await tl.store(dst, await tl.load(src, src.shape, src.dtype));
}

/** A copy whose host reference throws (the --verify fault test's bench). */
export default defineBench({
  name: "reference-throws",
  params: z.object({}),
  async run(sim) {
    const a = sim.random([16, 16], "f16", { seed: 1 });
    const src = await sim.toDevice(a, { name: "src" });
    const dst = sim.empty([16, 16], "f16", { name: "dst" });
    await sim.launch(copy, { grid: sim.grid({ sips: 1, cubes: 1, pes: 1 }), args: [src, dst] });
    return {
      check: {
        dst: {
          actual: dst,
          reference: () => {
            throw new Error("no reference for this shape");
          },
        },
      },
    };
  },
});
