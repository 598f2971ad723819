import { type DeviceTensor, defineBench } from "@kb/runtime";
import type { TL } from "@kb/tl";
import * as z from "zod";

/** Each PE computes exp of its rows in f32 and stores the f32 tile into the f16 output. */
async function rowsExp(tl: TL, x: DeviceTensor, y: DeviceTensor): Promise<void> {
  const row = tl.programId(0) * 4;
  const tile = await tl.load(x.at(row, 0), [4, 16], "f16");
  const wide = await tl.exp(await tl.cast(tile, "f32"));
  await tl.store(y.at(row, 0), wide); // y is f16: needs tl.cast(wide, "f16")
}

/** Storing an f32 tile into an f16 tensor (it used to overwrite the neighbouring PE's rows). */
export default defineBench({
  name: "dtype-store",
  params: z.object({}),
  async run(sim) {
    const x = await sim.toDevice(sim.random([16, 16], "f16", { seed: 2 }), { name: "x" });
    const y = sim.empty([16, 16], "f16", { name: "y" });
    await sim.launch(rowsExp, { grid: sim.grid({ sips: 1, cubes: 1, pes: 4 }), args: [x, y] });
  },
});
