import type { TL } from "@kb/tl";
import { readmeExample } from "@kb/tooling/readme-example";
import { describe, expect, it } from "vitest";
import { type DeviceTensor, Simulator } from "./index.js";

// The example of packages/runtime/README.md, run as written: `console` is a local that collects
// what the example prints, and the last test checks the code below still is the README's.
describe("README example", () => {
  it("launches a kernel on every PE and reads the results", async () => {
    const printed: unknown[][] = [];
    const console = { log: (...values: unknown[]) => printed.push(values) };
    // README example start

    // Each PE scales its 16 rows of x by 2.
    async function scale(tl: TL, x: DeviceTensor, out: DeviceTensor) {
      const row = tl.programId(0) * 16;
      const tile = await tl.load(x.at(row, 0), [16, 64], "f32");
      const doubled = await tl.mul(tile, 2);
      await tl.store(out.at(row, 0), doubled);
    }

    const sim = await Simulator.fromTopology({ name: "demo" }); // the schema's defaults: 8 PEs in one cube
    const x = sim.random([128, 64], "f32", { seed: 1 });
    const X = await sim.toDevice(x, { name: "x" });
    const out = sim.empty([128, 64], "f32", { name: "out" });
    const launch = await sim.launch(scale, { grid: sim.grid(), args: [X, out] });

    const results = sim.results();
    console.log(launch.pes, results.work.mathFlops, results.simTimeNs >= results.rooflineNs);
    // 8 8192 true

    // README example end
    expect(printed).toEqual([[8, 8192, true]]);
  });

  it("is the code of the README", () => {
    const { readme, test } = readmeExample(new URL("../README.md", import.meta.url), import.meta.url);
    expect(test).toBe(readme);
  });
});
