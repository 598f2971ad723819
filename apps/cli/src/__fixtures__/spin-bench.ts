import { defineBench } from "@kb/runtime";
import type { TL } from "@kb/tl";
import * as z from "zod";

/** Never ends: one PE_CPU cycle after another (a kernel whose loop bound is wrong). */
async function spin(tl: TL): Promise<void> {
  for (;;) await tl.cycles(1);
}

/** A kernel that never ends on one PE (the tests of run limits and signals). */
export default defineBench({
  name: "spin",
  description: "Launches a kernel that never ends.",
  params: z.object({}),
  async run(sim) {
    await sim.launch(spin, { grid: sim.grid({ sips: 1, cubes: 1, pes: 1 }), args: [] });
    return {};
  },
});
