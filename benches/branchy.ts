import { type DeviceTensor, defineBench } from "@kb/runtime";
import { type Dtype, Tensor } from "@kb/tensor";
import type { TL } from "@kb/tl";
import * as z from "zod";
import { cubeIndex, cubeParts, emptyRows, rowChecks, uploadCopies, uploadRows } from "./lib/cube-parts.js";
import { dtypeParam, gridOf, gridParams, seedParam } from "./lib/params.js";
import { expWhereFlagged } from "./lib/reference.js";

/** One cube's rows of x and out, a copy of the flags, and the index of its first row tile. */
interface BranchyPart {
  readonly x: DeviceTensor;
  readonly out: DeviceTensor;
  /** i32, one flag per row tile of the whole x. */
  readonly flags: DeviceTensor;
  readonly firstTile: number;
}

/**
 * Data-dependent control flow: the PE loads the flags, then for each of its row tiles (round-robin
 * over the cube's PEs) reads the tile's flag from the loaded data and either stores `exp` of the
 * tile (flag > 0, one PE_MATH op) or copies it unchanged (load and store only). Runner mode only:
 * the branch needs the flags' real values.
 */
export async function branchyKernel(
  tl: TL,
  parts: readonly (BranchyPart | null)[],
  tileRows: number,
): Promise<void> {
  const part = parts[cubeIndex(tl)];
  if (part === null || part === undefined) return;
  const [rows, cols] = part.x.shape as [number, number];
  const tiles = tl.cdiv(rows, tileRows);
  if (tl.programId(0) >= tiles) return;
  const flags = await tl.load(part.flags, [...part.flags.shape], "i32");
  for (let t = tl.programId(0); t < tiles; t += tl.numPrograms(0)) {
    const mark = tl.scratchMark();
    const r0 = t * tileRows;
    const x = await tl.load(part.x.at(r0, 0), [Math.min(tileRows, rows - r0), cols], part.x.dtype);
    if (flags.data.get(part.firstTile + t) > 0) {
      await tl.store(part.out.at(r0, 0), await tl.exp(x));
    } else {
      await tl.store(part.out.at(r0, 0), x);
    }
    tl.scratchRelease(mark);
  }
}

/**
 * The flags of the branchy bench: `tiles` i32 values, 1 with probability `probability` and else
 * 0, drawn from `seed` (reproducible: the same arguments give the same flags).
 */
export function branchyFlags(tiles: number, seed: number, probability: number): Tensor {
  const draws = Tensor.random([tiles], "f32", { seed, low: 0, high: 1 }).toFloat64Array();
  return Tensor.fromArray(
    Array.from(draws, (u) => (u < probability ? 1 : 0)),
    [tiles],
    "i32",
  );
}

/** Per row tile of x: `exp` where the tile's flag is positive, else a copy. */
export default defineBench({
  name: "branchy",
  description:
    "Kernels branching on loaded data: an i32 flag per row tile of x [rows, cols] (drawn from the seed) selects exp(tile) or a plain copy; runner mode only.",
  runnerOnly: true,
  params: z.object({
    rows: z.number().int().positive().default(1024).describe("Rows of x and out."),
    cols: z.number().int().positive().default(256).describe("Columns of x and out."),
    tileRows: z.number().int().positive().default(16).describe("Rows per tile (one flag each)."),
    probability: z
      .number()
      .min(0)
      .max(1)
      .default(0.5)
      .describe("Chance that a tile's flag is 1 (exp) rather than 0 (copy)."),
    dtype: dtypeParam,
    seed: seedParam,
    ...gridParams,
  }),
  async run(sim, p) {
    const dtype: Dtype = p.dtype;
    const grid = gridOf(sim, p);
    const tiles = Math.ceil(p.rows / p.tileRows);
    const x = sim.random([p.rows, p.cols], dtype, { seed: p.seed, low: -4, high: 4 });
    const flags = branchyFlags(tiles, p.seed + 1, p.probability);
    const parts = cubeParts(grid, p.rows, p.tileRows);
    const xs = await uploadRows(sim, x, parts, "x");
    const flagCopies = await uploadCopies(sim, flags, parts, "flags");
    const outs = emptyRows(sim, [p.rows, p.cols], dtype, parts, "out");
    const args = parts.map((part, i) => {
      const [xi, out, flagsI] = [xs[i], outs[i], flagCopies[i]];
      return xi && out && flagsI
        ? { x: xi, out, flags: flagsI, firstTile: part.rows.start / p.tileRows }
        : null;
    });
    await sim.launch(branchyKernel, { grid, args: [args, p.tileRows], name: "branchy" });
    return { check: rowChecks("out", parts, outs, () => expWhereFlagged(x, flags, p.tileRows, dtype)) };
  },
});
