import { type DeviceTensor, defineBench } from "@kb/runtime";
import type { TL } from "@kb/tl";
import * as z from "zod";

/** Copies `src` to `dst` through the PE's TCM. */
async function copy(tl: TL, src: DeviceTensor, dst: DeviceTensor): Promise<void> {
  await tl.store(dst, await tl.load(src, src.shape, src.dtype));
}

/** `copies` launches of a copy, stating its plan before each and at the end (`sim.progress`). */
export default defineBench({
  name: "plan",
  description: "Copies a 64 x 64 tensor `copies` times, stating its position with sim.progress.",
  params: z.object({
    copies: z.number().int().min(1).default(2),
    /** The plan's total, when it is not `copies` (to test a position past the end). */
    total: z.number().optional(),
  }),
  async run(sim, p) {
    const src = await sim.toDevice(sim.random([64, 64], "f16", { seed: 1 }), { name: "src" });
    const dst = sim.empty([64, 64], "f16", { name: "dst" });
    for (let i = 0; i < p.copies; i++) {
      sim.progress(i, p.total ?? p.copies, `copy ${i + 1}`);
      await sim.launch(copy, { grid: sim.grid({ sips: 1, cubes: 1, pes: 1 }), args: [src, dst] });
    }
    sim.progress(p.copies, p.total ?? p.copies, "done");
    return {};
  },
});
