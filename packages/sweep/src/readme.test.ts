import { readmeExample } from "@kb/tooling/readme-example";
import { describe, expect, it } from "vitest";
import { describeValues, parseSweepSpec, planSweep } from "./index.js";

// The example of packages/sweep/README.md, run as written: `console` is a local that collects what
// the example prints, and the last test checks the code below still is the README's.
describe("README example", () => {
  it("plans a 2 x 3 grid with a constraint", () => {
    const printed: unknown[] = [];
    const console = { log: (...values: unknown[]) => printed.push(values.length === 1 ? values[0] : values) };
    // README example start

    const spec = parseSweepSpec(`
name: tiles
bench: gemm
axes:
  hbm: { path: topology.cube.hbm.preset, values: [hbm3, hbm3e] }
  tile: { path: params.tile, values: [[32, 32, 32], [64, 64, 64], [128, 128, 128]] }
constraints: ["tile[0] <= 64 || hbm == 'hbm3e'"]
`);
    const plan = planSweep(spec, { name: "base" });
    for (const point of plan.points) console.log(point.index, describeValues(point.values));
    console.log(plan.skipped.map((point) => point.index));
    console.log(plan.points[4]?.inputs.params);
    // README example end
    expect(printed).toEqual([
      [0, "hbm=hbm3 tile=[32,32,32]"],
      [1, "hbm=hbm3 tile=[64,64,64]"],
      [3, "hbm=hbm3e tile=[32,32,32]"],
      [4, "hbm=hbm3e tile=[64,64,64]"],
      [5, "hbm=hbm3e tile=[128,128,128]"],
      [2],
      { tile: [128, 128, 128] },
    ]);
  });

  it("is the code of the README", () => {
    const { readme, test } = readmeExample(new URL("../README.md", import.meta.url), import.meta.url);
    expect(test).toBe(readme);
  });
});
