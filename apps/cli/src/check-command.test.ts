import { mkdtempSync, readdirSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { kb } from "./test-support.js";

// `kb check` and `kb run --typecheck`: a bench type-checked with the @kb declarations (the built
// packages/*/dist: build first), TypeScript's errors printed at their file:line:col. The benches
// here sit in a temporary folder with no node_modules, as a user's lone bench file does.

const root = fileURLToPath(new URL("../../../", import.meta.url));
const dir = realpathSync(mkdtempSync(join(tmpdir(), "kb-check-")));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A bench whose kernel's line 6 is `  const tile = await <load>;` (the load at column 22). */
function benchWith(name: string, load: string): string {
  const file = join(dir, name);
  writeFileSync(
    file,
    `import { defineBench } from "@kb/runtime";
import type { TL } from "@kb/tl";
import * as z from "zod";

async function copy(tl: TL, src: number, dst: number): Promise<void> {
  const tile = await ${load};
  await tl.store(dst, tile);
}

export default defineBench({
  name: "checked",
  params: z.object({ n: z.number().int().default(64) }),
  async run(sim, p) {
    const dst = sim.empty([p.n], "f32", { name: "dst" });
    await sim.launch(copy, { grid: sim.grid({ sips: 1, cubes: 1, pes: 1 }), args: [dst.address, dst.address] });
    return {};
  },
});
`,
  );
  return file;
}

const here = (file: string) => relative(process.cwd(), file);

// TypeScript takes seconds to load and to check against the lib and @kb declarations.
describe("kb check", { timeout: 180_000 }, () => {
  it("prints a misspelt tl.load at its file:line:col with TypeScript's code, exit 1", async () => {
    const file = benchWith("misspelt.ts", 'tl.lod(src, [64], "f32")');
    const ran = await kb("check", file);
    expect(ran.stdout).toBe(
      `${here(file)}:6:25: error TS2551: Property 'lod' does not exist on type 'TLContext'. Did you mean 'load'?\n`,
    );
    expect(ran.stderr).toBe("kb check: 1 error; fix them and check again.\n");
    expect(ran.code).toBe(1);
  });

  it("prints tl.load given a string for its address, exit 1", async () => {
    const file = benchWith("string-address.ts", 'tl.load("src", [64], "f32")');
    const ran = await kb("check", file);
    // `  const tile = await tl.load("src"`: the argument starts at column 30.
    expect(ran.stdout).toBe(
      `${here(file)}:6:30: error TS2345: Argument of type 'string' is not assignable to parameter of type 'Pointer'.\n`,
    );
    expect(ran.code).toBe(1);
  });

  it("passes every shipped bench and the Triton tutorials, exit 0 with one ok line", async () => {
    const benches = readdirSync(join(root, "benches"))
      .filter((name) => /^[^.]+\.ts$/.test(name))
      .map((name) => join(root, "benches", name));
    const tutorials = readdirSync(join(root, "examples", "triton-tutorials"))
      .filter((name) => /^[^.]+\.ts$/.test(name))
      .map((name) => join(root, "examples", "triton-tutorials", name));
    expect(benches.length).toBeGreaterThanOrEqual(10);
    expect(tutorials.length).toBeGreaterThanOrEqual(8); // 01-07 and the embedding lookup
    const ran = await kb("check", ...benches, ...tutorials);
    expect(ran.stderr).toBe("");
    expect(ran.stdout).toMatch(
      new RegExp(
        `^ok: ${benches.length + tutorials.length} benches and the \\d+ files they import type-check clean\\n$`,
      ),
    );
    expect(ran.code).toBe(0);
  });

  it("kb run --typecheck prints the errors on stderr and runs nothing, exit 1", async () => {
    const file = benchWith("run-misspelt.ts", 'tl.lod(src, [64], "f32")');
    const ran = await kb("run", file, "--typecheck", "--json");
    expect(ran.stdout).toBe("");
    const [first, second, ...rest] = ran.stderr.split("\n");
    expect(first).toBe(
      `${here(file)}:6:25: error TS2551: Property 'lod' does not exist on type 'TLContext'. Did you mean 'load'?`,
    );
    expect(second).toContain(
      `kb run --typecheck: 1 type error in ${here(file)} and the files it imports (above); nothing was run. Fix them, or run without --typecheck.`,
    );
    expect(rest).toEqual([""]);
    expect(ran.code).toBe(1);
  });

  it("kb run --typecheck runs a bench that checks clean", async () => {
    const file = benchWith("good.ts", 'tl.load(src, [64], "f32")');
    const ran = await kb("run", file, "--typecheck", "--json");
    expect(ran.stderr).toBe("");
    expect(JSON.parse(ran.stdout)).toMatchObject({ bench: "checked" });
    expect(ran.code).toBe(0);
  });
});
