import { type DeviceTensor, defineBench } from "@kb/runtime";
import type { TL } from "@kb/tl";
import * as z from "zod";

/** dtype-store-bench.ts's kernel with its four tl calls on one line: the store (f32 into f16) fails. */
async function rowsExpOneLine(tl: TL, x: DeviceTensor, y: DeviceTensor): Promise<void> {
  const row = tl.programId(0) * 4;
  // biome-ignore format: the calls stay on one line (the columns of call sites after tagged calls).
  const tile = await tl.load(x.at(row, 0), [4, 16], "f16"); const wide = await tl.exp(await tl.cast(tile, "f32")); await tl.store(y.at(row, 0), wide);
}

/** One launch of the kernel above on 4 PEs. */
export default defineBench({
  name: "same-line",
  params: z.object({}),
  async run(sim) {
    const x = await sim.toDevice(sim.random([16, 16], "f16", { seed: 2 }), { name: "x" });
    const y = sim.empty([16, 16], "f16", { name: "y" });
    await sim.launch(rowsExpOneLine, { grid: sim.grid({ sips: 1, cubes: 1, pes: 4 }), args: [x, y] });
  },
});
