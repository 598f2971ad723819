import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { sourceFilesDigest } from "./manifest.js";
import { benchFileDigest, benchFiles } from "./node/source-files-node.js";
import { importedSourceFiles } from "./source-files.js";

// One digest of a bench's files for Node (`kb run`, `kb sweep`, `kb worker` read them) and the
// browser (the playground passes its editor's files): a bench that imports ./lib/params.js has
// the same manifest digest in both, and an edit to any of its files is a new digest.

const sha256 = (bytes: string | Uint8Array): string => createHash("sha256").update(bytes).digest("hex");
const repo = fileURLToPath(new URL("../../../", import.meta.url));

describe("sourceFilesDigest", () => {
  it("of a lone file is the sha256 of its bytes, whatever its path (single-file digests do not change)", async () => {
    const text = "export default 1;\n";
    expect(await sourceFilesDigest({ "bench.ts": text })).toBe(sha256(text));
    expect(await sourceFilesDigest({ "x/y.ts": new TextEncoder().encode(text) })).toBe(sha256(text));
  });

  it("of several files is the sha256 of path\\0bytes\\0 in sorted path order, whatever the insertion order", async () => {
    const expected = sha256("a.ts\0A\0lib/b.ts\0B\0");
    expect(await sourceFilesDigest({ "a.ts": "A", "lib/b.ts": "B" })).toBe(expected);
    expect(await sourceFilesDigest({ "lib/b.ts": "B", "a.ts": "A" })).toBe(expected);
    // Text and bytes of the same file are one file.
    expect(await sourceFilesDigest({ "lib/b.ts": new Uint8Array([66]), "a.ts": "A" })).toBe(expected);
    // A path is part of it: the same bytes under another name are other code.
    expect(await sourceFilesDigest({ "a.ts": "A", "lib/c.ts": "B" })).not.toBe(expected);
  });
});

describe("importedSourceFiles", () => {
  const files: Record<string, string> = {
    "benches/main.ts": [
      'import * as tl from "@kb/tl";',
      'import { N } from "./lib/params.js";',
      "export { M } from './lib/more';",
      'const lazy = () => import("./lib/lazy.js");',
      'import "./lib/missing.js";',
    ].join("\n"),
    "benches/lib/params.ts": 'import { shared } from "../../shared/x.js";\nexport const N = shared;\n',
    "benches/lib/more.ts": 'export { N as M } from "./params.js";\n',
    "benches/lib/lazy.ts": "export const lazy = 1;\n",
    "benches/lib/unused.ts": "export const unused = 1;\n",
    "shared/x.ts": "export const shared = 1;\n",
  };

  it("gives the entry and what it imports by relative path, transitively, by path from the entry's folder", () => {
    const found = importedSourceFiles("benches/main.ts", (path) => files[path]);
    expect(Object.keys(found).sort()).toEqual([
      "../shared/x.ts",
      "lib/lazy.ts",
      "lib/more.ts",
      "lib/params.ts",
      "main.ts",
    ]);
    expect(found["lib/params.ts"]).toBe(files["benches/lib/params.ts"]);
  });

  it("finds the same files on disk as in a map of texts (absolute or relative entry)", async () => {
    const text = (path: string) => readFileSync(`${repo}${path}`, "utf8");
    const fromMap = importedSourceFiles("benches/gemm.ts", (path) =>
      path.startsWith("benches/") && path.endsWith(".ts") ? text(path) : undefined,
    );
    const fromDisk = benchFiles(`${repo}benches/gemm.ts`);
    expect(Object.keys(fromMap).sort()).toEqual(Object.keys(fromDisk).sort());
    expect(Object.keys(fromDisk)).toContain("lib/params.ts");
  });
});

describe("a bench's digest: the playground's files and kb run's agree", () => {
  // The playground holds the bench and every file of benches/lib as text by virtual path.
  const library = readdirSync(`${repo}benches/lib`, { recursive: true, encoding: "utf8" })
    .filter((path) => path.endsWith(".ts"))
    .map((path) => `benches/lib/${path.split("\\").join("/")}`);
  const benches = readdirSync(`${repo}benches`).filter((name) => name.endsWith(".ts"));

  it.each(benches)("benches/%s", async (name) => {
    const main = `benches/${name}`;
    const playground: Record<string, string> = {};
    for (const path of [main, ...library]) playground[path] = readFileSync(`${repo}${path}`, "utf8");
    const inBrowser = await sourceFilesDigest(importedSourceFiles(main, (path) => playground[path]));
    expect(inBrowser).toBe(await benchFileDigest(`${repo}${main}`));
  });

  it("covers the files a shipped bench imports: an edit to lib/params.ts is a new digest", async () => {
    const main = "benches/vector-add.ts";
    const playground: Record<string, string> = {};
    for (const path of [main, ...library]) playground[path] = readFileSync(`${repo}${path}`, "utf8");
    const digest = await sourceFilesDigest(importedSourceFiles(main, (path) => playground[path]));
    expect(digest).not.toBe(sha256(playground[main] as string));
    playground["benches/lib/params.ts"] += "export const EDITED = 2;\n";
    expect(await sourceFilesDigest(importedSourceFiles(main, (path) => playground[path]))).not.toBe(digest);
  });
});
