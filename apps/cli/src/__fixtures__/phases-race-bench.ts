import { type DeviceTensor, defineBench } from "@kb/runtime";
import type { TL } from "@kb/tl";
import * as z from "zod";

/**
 * PE 0 loads `x` (1 KiB) and stores it over the first rows of `y`; PE 1 loads all of `y` (64 KiB)
 * in one tl.load. Nothing orders the store and the load: PE 1's load is in flight when PE 0's
 * store is issued, so phase 1 (a store is visible at issue, a load reads at completion) hands
 * PE 1 x's values while phase 2 (each copy at its DMA's start) copies y's zeros.
 */
async function racy(tl: TL, x: DeviceTensor, y: DeviceTensor): Promise<void> {
  if (tl.programId(0) === 0) {
    await tl.store(y, await tl.load(x, [16, 16], "f32"));
  } else {
    await tl.load(y, [1024, 16], "f32"); // racing load
  }
}

/** Two PEs racing on one tensor (the `kb run --check-phases` tests' diverging bench). */
export default defineBench({
  name: "phases-race",
  description: "PE 0 stores into a tensor PE 1 is loading, with nothing ordering them.",
  params: z.object({}),
  async run(sim) {
    const values = Array.from({ length: 256 }, (_, i) => i + 1);
    const x = await sim.toDevice(sim.fromArray(values, [16, 16], "f32"), { name: "x" });
    const y = await sim.toDevice(sim.zeros([1024, 16], "f32"), { name: "y" });
    await sim.launch(racy, { grid: sim.grid({ sips: 1, cubes: 1, pes: 2 }), args: [x, y] });
  },
});
