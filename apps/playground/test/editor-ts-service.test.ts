import { readFileSync } from "node:fs";
import ts from "typescript";
import { beforeAll, describe, expect, it } from "vitest";
import { gatherTypes } from "../scripts/gather-types.mjs";
import { createTsService, type TsService } from "../src/editor/ts-service.js";

// The bench editor's language service as the worker runs it, in Node, over the declarations the
// build gathers (packages/*/dist: run `turbo run build` first) and the vector-add example's files.

const repo = new URL("../../../", import.meta.url);
const read = (path: string) => readFileSync(new URL(path, repo), "utf8");
const BENCH = "benches/vector-add.ts";
const files = Object.fromEntries(
  [
    BENCH,
    "benches/lib/cube-parts.ts",
    "benches/lib/params.ts",
    "benches/lib/reference.ts",
    "benches/lib/split.ts",
    "benches/lib/blocked-matmul.ts",
  ].map((path) => [path, read(path)]),
);

let service: TsService;
beforeAll(() => {
  service = createTsService(ts, gatherTypes());
  service.setFiles(files);
}, 60_000);

describe("the bench editor's TypeScript service", () => {
  it("finds no error in the vector-add example (its imports of @kb/*, zod and ./lib resolve)", () => {
    expect(service.diagnostics(BENCH)).toEqual([]);
  });

  it("reports a misspelt tl.load at its line and column, saying the property does not exist", () => {
    const text = files[BENCH] as string;
    // Line 33 is `    const x = await tl.load(part.x.at(i), [n], part.x.dtype);`: "lod" starts at column 24.
    service.updateFile(BENCH, text.replace("tl.load(part.x", "tl.lod(part.x"));
    const found = service.diagnostics(BENCH);
    service.updateFile(BENCH, text);
    expect(found.map(({ line, col, message, severity }) => ({ line, col, message, severity }))).toEqual([
      {
        line: 33,
        col: 24,
        severity: "error",
        message: "Property 'lod' does not exist on type 'TLContext'. Did you mean 'load'?",
      },
    ]);
    expect(service.diagnostics(BENCH)).toEqual([]);
  });

  it("completes the members of tl after `tl.`, replacing the word typed so far", () => {
    const text = files[BENCH] as string;
    const dot = text.indexOf("tl.load(part.x") + "tl.".length;
    const after = service.completions(BENCH, dot);
    expect(after?.from).toBe(dot);
    const labels = after?.options.map((option) => option.label) ?? [];
    expect(labels).toEqual(expect.arrayContaining(["load", "store", "programId", "numPrograms"]));
    expect(after?.options.find((option) => option.label === "load")?.kind).toBe("method");
    // Typed `tl.lo`: the completion replaces "lo".
    expect(service.completions(BENCH, dot + 2)?.from).toBe(dot);
  });

  it("shows the type of tl.load on hover, with its documentation", () => {
    const text = files[BENCH] as string;
    const at = text.indexOf("tl.load(part.x") + "tl.".length;
    const hover = service.hover(BENCH, at + 1);
    expect(hover?.from).toBe(at);
    expect(hover?.to).toBe(at + "load".length);
    expect(hover?.signature).toMatch(
      /^\(method\) MovementCalls\.load\(ptr: Pointer, shape: readonly number\[\], /,
    );
    expect(hover?.documentation).toMatch(/\w/);
  });

  it("resolves a file the page passes later with setFiles (an edited ./lib import)", () => {
    service.setFiles({ ...files, "benches/lib/split.ts": "export const nothing = 1;\n" });
    const messages = service.diagnostics("benches/lib/cube-parts.ts").map((d) => d.message);
    service.setFiles(files);
    expect(messages).toContain(`Module '"./split.js"' has no exported member 'splitEven'.`);
  });

  it("says which files it has when asked about another one", () => {
    expect(() => service.diagnostics("benches/nope.ts")).toThrow(
      /no file benches\/nope.ts; the files are \/benches\/vector-add.ts/,
    );
  });
});
