import { defineBench } from "@kb/runtime";
import type { TL } from "@kb/tl";
import * as z from "zod";

/** Never ends and never lets simulated time advance: zero PE_CPU cycles, again and again. */
async function zeroSpin(tl: TL): Promise<void> {
  for (;;) await tl.cycles(0);
}

/** A kernel that spins at zero simulated time on one PE (the tests of the stall detector). */
export default defineBench({
  name: "zero-time-spin",
  description: "Launches a kernel that spins on tl.cycles(0) for ever.",
  params: z.object({}),
  async run(sim) {
    await sim.launch(zeroSpin, { grid: sim.grid({ sips: 1, cubes: 1, pes: 1 }), args: [] });
    return {};
  },
});
