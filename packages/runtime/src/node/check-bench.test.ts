import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { checkBench } from "./check-bench.js";

// checkBench type-checks a bench and the files it imports against the built @kb declarations
// (packages/*/dist: run the build first), from a folder with no node_modules of its own.

const dir = mkdtempSync(join(tmpdir(), "kb-check-bench-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A bench file in the temporary folder (and its lib/ files); returns its path. */
function write(name: string, text: string): string {
  const path = join(dir, name);
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, text);
  return path;
}

// Line 8 is the kernel's load: `const x = await tl.load(src, [n], "f32");`.
const BENCH = (load: string) => `import { defineBench } from "@kb/runtime";
import type { TL } from "@kb/tl";
import * as z from "zod";
import { half } from "./lib/half.js";

export async function kernel(tl: TL, n: number): Promise<void> {
  const src = tl.programId(0);
  const x = await ${load};
  await tl.store(src, x);
}

export default defineBench({
  name: "checked",
  params: z.object({ n: z.number().default(half(256)) }),
  async run(_sim, _p) {
    return {};
  },
});
`;

write("lib/half.ts", "export const half = (n: number): number => n / 2;\n");

// TypeScript takes seconds to load and to check against the lib and @kb declarations.
describe("checkBench", { timeout: 120_000 }, () => {
  it("finds nothing wrong in a correct bench, and lists the files it imports", async () => {
    const file = write("good.ts", BENCH('tl.load(src, [n], "f32")'));
    const checked = await checkBench([file]);
    expect(checked.diagnostics).toEqual([]);
    expect([...checked.files].sort()).toEqual([file, join(dir, "lib", "half.ts")]);
  });

  it("reports a misspelt tl.load at its line and column with TypeScript's code", async () => {
    const file = write("misspelt.ts", BENCH('tl.lod(src, [n], "f32")'));
    const { diagnostics } = await checkBench([file]);
    // `  const x = await tl.lod(`: "lod" starts at column 22 of line 8.
    expect(diagnostics).toEqual([
      {
        file,
        line: 8,
        col: 22,
        category: "error",
        code: 2551,
        message: "Property 'lod' does not exist on type 'TLContext'. Did you mean 'load'?",
      },
    ]);
  });

  it("reports tl.load given a string for its address", async () => {
    const file = write("string-address.ts", BENCH('tl.load("x", [n], "f32")'));
    const { diagnostics } = await checkBench([file]);
    // `  const x = await tl.load("x"`: the argument starts at column 27.
    expect(diagnostics.map(({ line, col, code }) => ({ line, col, code }))).toEqual([
      { line: 8, col: 27, code: 2345 },
    ]);
    expect(diagnostics[0]?.message).toBe(
      "Argument of type 'string' is not assignable to parameter of type 'Pointer'.",
    );
  });

  it("checks the files a bench imports too", async () => {
    write("lib/wrong.ts", 'export const wrong: number = "one";\n');
    const file = write(
      "imports-wrong.ts",
      'import { wrong } from "./lib/wrong.js";\nexport default wrong;\n',
    );
    const { diagnostics } = await checkBench([file]);
    expect(diagnostics.map(({ file, line, col, code }) => ({ file, line, col, code }))).toEqual([
      { file: join(dir, "lib", "wrong.ts"), line: 1, col: 14, code: 2322 },
    ]);
  });

  it("refuses a JavaScript bench, saying it checks TypeScript files", async () => {
    const file = write("plain.mjs", "export default 1;\n");
    await expect(checkBench([file])).rejects.toThrow(
      `${file} is JavaScript: kb check type-checks TypeScript bench files (.ts, .mts, .cts); run a JavaScript bench without the check.`,
    );
  });

  it("says where it looked when kb's declarations cannot be found", async () => {
    const file = write("good-again.ts", BENCH('tl.load(src, [n], "f32")'));
    await expect(checkBench([file], { resolveFrom: join(dir, "cli.js") })).rejects.toThrow(
      /the declarations of @kb\/runtime, @kb\/tl, zod were not found from .*cli\.js\. In a clone of kernbench-ts, build the packages first/,
    );
  });
});
