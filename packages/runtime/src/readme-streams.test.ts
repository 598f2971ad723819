import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { TL } from "@kb/tl";
import { readmeExample } from "@kb/tooling/readme-example";
import { describe, expect, it } from "vitest";
import { type DeviceTensor, Simulator } from "./index.js";

// The example of the README's "Host streams" section, run as written (as readme-launch.test.ts
// does for "Launch grids"); the last test checks the code below still is the README's.
describe("README host streams example", { timeout: 60_000 }, () => {
  it("runs two launches on halves of the PEs at once, a third after a signal", async () => {
    const printed: unknown[][] = [];
    const console = { log: (...values: unknown[]) => printed.push(values) };
    // README example start

    // Each program copies its 16 rows of x to out.
    async function copy(tl: TL, x: DeviceTensor, out: DeviceTensor) {
      const row = tl.programId(0) * 16;
      await tl.store(out.at(row, 0), await tl.load(x.at(row, 0), [16, 64], "f32"));
    }

    const sim = await Simulator.fromTopology({ name: "demo" }); // 8 PEs in one cube
    const x = await sim.toDevice(sim.random([64, 64], "f32", { seed: 1 }));
    const out = sim.empty([64, 64], "f32");
    const low = sim.grid({ pes: [0, 1, 2, 3] });
    const high = sim.grid({ pes: [4, 5, 6, 7] });
    const firstDone = sim.signal("first copy done");
    const start = sim.now;
    const [a, b, c] = await sim.streams([
      async () => {
        const record = await sim.launch(copy, { grid: low, args: [x, out], name: "a" });
        firstDone.fire();
        return record;
      },
      () => sim.launch(copy, { grid: high, args: [x, out], name: "b" }),
      async () => {
        await firstDone.wait();
        return await sim.launch(copy, { grid: low, args: [x, out], name: "c" });
      },
    ]);
    console.log(a?.overlaps, b?.overlaps, c?.startNs === a?.endNs, a?.startNs === start);
    // [ 'b' ] [ 'a', 'c' ] true true

    // README example end
    expect(printed).toEqual([[["b"], ["a", "c"], true, true]]);
  });

  it("is the code of the README's Host streams section", () => {
    const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
    const section = readme.slice(readme.indexOf("## Host streams"));
    expect(section).toMatch(/^## Host streams\n[\s\S]*```ts\n/);
    const dir = mkdtempSync(join(tmpdir(), "kb-readme-"));
    try {
      const file = join(dir, "README.md");
      writeFileSync(file, section);
      const { readme: block, test } = readmeExample(pathToFileURL(file), import.meta.url);
      expect(block).toContain("sim.streams");
      expect(test).toBe(block);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
