import { type DeviceTensor, defineBench } from "@kb/runtime";
import type { TL } from "@kb/tl";
import * as z from "zod";

/** Two 128 x 128 f16 loads and their dot on one PE (the `kb run --by-line` test's kernel). */
async function twoLoadsAndADot(tl: TL, a: DeviceTensor, b: DeviceTensor): Promise<void> {
  const x = await tl.load(a, [128, 128], "f16");
  const y = await tl.load(b, [128, 128], "f16");
  await tl.dot(x, y);
}

/** The kernel above on PE0 of cube 0, its inputs at hbm(0) and hbm(2 MiB). */
export default defineBench({
  name: "by-line",
  description: "Two 32 KiB loads and a 128^3 f16 dot on one PE.",
  params: z.object({}),
  async run(sim) {
    const a = await sim.toDevice(sim.random([128, 128], "f16", { seed: 1 }), { name: "a" });
    const b = await sim.toDevice(sim.random([128, 128], "f16", { seed: 2 }), { name: "b" });
    await sim.launch(twoLoadsAndADot, { grid: sim.grid({ sips: 1, cubes: 1, pes: 1 }), args: [a, b] });
    return {};
  },
});
