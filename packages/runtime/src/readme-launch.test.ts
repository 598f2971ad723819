import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { TL } from "@kb/tl";
import { readmeExample } from "@kb/tooling/readme-example";
import { describe, expect, it } from "vitest";
import { type DeviceTensor, Simulator } from "./index.js";

// The example of the README's "Launch grids" section, run as written (as readme.test.ts does for
// the first example): `console` collects what it prints; the last test checks the code below
// still is the README's.
describe("README launch grids example", () => {
  it("launches a logical grid of cdiv(n, BLOCK) programs on 4 PEs", async () => {
    const printed: unknown[][] = [];
    const console = { log: (...values: unknown[]) => printed.push(values) };
    // README example start

    const BLOCK = 256;

    // Triton's vector add: program pid adds one block of x and y (the last block is partial).
    async function add(tl: TL, x: DeviceTensor, y: DeviceTensor, out: DeviceTensor, n: number) {
      const start = tl.programId(0) * BLOCK;
      const count = Math.min(BLOCK, n - start);
      const xs = await tl.load(x.at(start), [count], "f32");
      const ys = await tl.load(y.at(start), [count], "f32");
      await tl.store(out.at(start), await tl.add(xs, ys));
    }

    const sim = await Simulator.fromTopology({ name: "demo" });
    const n = 5000;
    const x = await sim.toDevice(sim.random([n], "f32", { seed: 1 }));
    const y = await sim.toDevice(sim.random([n], "f32", { seed: 2 }));
    const out = sim.empty([n], "f32");
    const programs = [Math.ceil(n / BLOCK)];
    const launch = await sim.launch(add, { grid: { pes: 4 }, programs, args: [x, y, out, n] });
    console.log(programs, launch.pes);
    // [ 20 ] 4

    // README example end
    expect(printed).toEqual([[[20], 4]]);
  });

  it("is the code of the README's Launch grids section", () => {
    const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
    const section = readme.slice(readme.indexOf("## Launch grids"));
    expect(section).toMatch(/^## Launch grids\n[\s\S]*```ts\n/);
    // readmeExample reads a README's first ts block: give it the section alone.
    const dir = mkdtempSync(join(tmpdir(), "kb-readme-"));
    try {
      const file = join(dir, "README.md");
      writeFileSync(file, section);
      const { readme: block, test } = readmeExample(pathToFileURL(file), import.meta.url);
      expect(block).toContain("programs");
      expect(test).toBe(block);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
