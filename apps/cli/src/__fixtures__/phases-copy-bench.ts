import { type DeviceTensor, defineBench } from "@kb/runtime";
import type { TL } from "@kb/tl";
import * as z from "zod";

/** Each PE copies its rows of `src` to `dst`, `tiles` tiles of 8 rows one after another. */
async function tiledCopy(tl: TL, src: DeviceTensor, dst: DeviceTensor, tiles: number): Promise<void> {
  const cols = src.shape[1] as number;
  for (let tile = 0; tile < tiles; tile++) {
    const row = (tl.programId(0) * tiles + tile) * 8;
    const mark = tl.scratchMark();
    await tl.store(dst.at(row, 0), await tl.load(src.at(row, 0), [8, cols], src.dtype));
    tl.scratchRelease(mark);
  }
}

/** A copy over `pes` PEs of one cube, `tiles` loads each (the `kb run --check-phases` tests' agreeing bench). */
export default defineBench({
  name: "phases-copy",
  description: "Copies a tensor HBM to HBM over several PEs, 8 rows per load.",
  params: z.object({
    pes: z.number().int().min(1).default(4),
    tiles: z.number().int().min(1).default(5),
  }),
  async run(sim, p) {
    const rows = p.pes * p.tiles * 8;
    const a = sim.random([rows, 32], "f16", { seed: 1 });
    const src = await sim.toDevice(a, { name: "src" });
    const dst = sim.empty([rows, 32], "f16", { name: "dst" });
    await sim.launch(tiledCopy, {
      grid: sim.grid({ sips: 1, cubes: 1, pes: p.pes }),
      args: [src, dst, p.tiles],
    });
    return { check: { dst: { actual: dst, reference: () => a } } };
  },
});
