import { type DeviceTensor, defineBench } from "@kb/runtime";
import type { TL } from "@kb/tl";
import * as z from "zod";

/** A broken copy: the tile is loaded one row too far down (the `--verify` FAIL test). */
async function shiftedCopy(tl: TL, src: DeviceTensor, dst: DeviceTensor): Promise<void> {
  const [rows, cols] = src.shape as [number, number];
  const tile = await tl.load(src.at(1, 0), [rows - 1, cols], src.dtype);
  await tl.store(dst, tile);
}

export default defineBench({
  name: "shifted-copy",
  params: z.object({ rows: z.number().int().min(2).default(8), cols: z.number().int().min(1).default(8) }),
  async run(sim, p) {
    const a = sim.random([p.rows, p.cols], "f32", { seed: 3 });
    const src = await sim.toDevice(a, { name: "src" });
    const dst = sim.empty([p.rows, p.cols], "f32", { name: "dst" });
    await sim.launch(shiftedCopy, { grid: sim.grid({ sips: 1, cubes: 1, pes: 1 }), args: [src, dst] });
    return { check: { dst: { actual: dst, reference: () => a } } };
  },
});
