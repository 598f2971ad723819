import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

// No module of these packages may import, at run time, a module that (directly or not) imports
// it back: an import cycle makes the evaluation order decide whether a value is still undefined
// when it is used. Type-only imports are erased, so they may form cycles.

const packagesDir = fileURLToPath(new URL("../../", import.meta.url));

/** The `src/` files of a package that the build compiles: every `.ts` but tests, recursively. */
function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((entry) => {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) return entry.name === "__fixtures__" ? [] : sourceFiles(path);
      return entry.name.endsWith(".ts") && !entry.name.endsWith(".test.ts") && !entry.name.endsWith(".d.ts")
        ? [path]
        : [];
    })
    .sort();
}

// `import ... from "./x.js"`, `export ... from "./x.js"` and `import "./x.js"` at the start of a
// line (the clause may span lines); `type` right after the keyword makes it type-only.
const STATEMENT =
  /^(import|export)(\s+type(?=[\s{*]))?\s*((?:[\w$]+\s*,\s*)?(?:\{[^}]*\}|\*(?:\s+as\s+[\w$]+)?|[\w$]+))\s*from\s*["'](\.{1,2}\/[^"']+)["']/gm;
const SIDE_EFFECT = /^import\s*["'](\.{1,2}\/[^"']+)["']/gm;

/** Whether an import clause names values: not `{ type A, type B }` (erased like `import type`). */
function importsValues(clause: string): boolean {
  const braces = /\{([^}]*)\}/.exec(clause);
  if (braces === null || clause.slice(0, braces.index).trim() !== "") return true;
  const names = (braces[1] as string)
    .split(",")
    .map((name) => name.trim())
    .filter((name) => name !== "");
  return names.length === 0 || names.some((name) => !/^type\s/.test(name));
}

/** The relative value imports of `file`, resolved to files. */
function valueImports(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const specifiers: string[] = [];
  for (const match of text.matchAll(STATEMENT)) {
    if (match[2] === undefined && importsValues(match[3] as string)) specifiers.push(match[4] as string);
  }
  for (const match of text.matchAll(SIDE_EFFECT)) specifiers.push(match[1] as string);
  return specifiers.map((specifier) => {
    const base = resolve(dirname(file), specifier.replace(/\.js$/, ""));
    const found = [`${base}.ts`, join(base, "index.ts")].find((candidate) => existsSync(candidate));
    if (found === undefined) throw new Error(`${file}: cannot resolve import "${specifier}"`);
    return found;
  });
}

/** Every cycle a depth-first walk closes (each as `a -> b -> ... -> a`), in file order. */
function importCycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const state = new Map<string, "open" | "done">();
  const stack: string[] = [];
  const cycles: string[][] = [];
  const visit = (file: string): void => {
    state.set(file, "open");
    stack.push(file);
    for (const next of graph.get(file) ?? []) {
      const seen = state.get(next);
      if (seen === "open") cycles.push([...stack.slice(stack.indexOf(next)), next]);
      else if (seen === undefined) visit(next);
    }
    stack.pop();
    state.set(file, "done");
  };
  for (const file of graph.keys()) if (!state.has(file)) visit(file);
  return cycles;
}

describe("import cycles", () => {
  it("finds a cycle, and only through value imports", () => {
    const graph = new Map([
      ["a", ["b"]],
      ["b", ["c"]],
      ["c", ["a", "d"]],
      ["d", []],
    ]);
    expect(importCycles(graph)).toEqual([["a", "b", "c", "a"]]);
    expect(
      importCycles(
        new Map([
          ["a", ["b"]],
          ["b", []],
        ]),
      ),
    ).toEqual([]);
    expect(importsValues("{ type A, type B }")).toBe(false);
    expect(importsValues("{ type A, B }")).toBe(true);
    expect(importsValues("Default, { type A }")).toBe(true);
    expect(importsValues("* as z")).toBe(true);
    const sample = `import type { A } from "./a.js";\nimport {\n  type B,\n  type C,\n} from "./b.js";\nexport { D } from "./d.js";\n`;
    expect([...sample.matchAll(STATEMENT)].map((match) => [match[2] !== undefined, match[4]])).toEqual([
      [true, "./a.js"],
      [false, "./b.js"],
      [false, "./d.js"],
    ]);
  });

  // Every package of the workspace with sources.
  const packages = readdirSync(packagesDir).filter((name) => existsSync(join(packagesDir, name, "src")));
  it("covers every package, the framework, its built-ins and the probe among them", () => {
    expect(packages).toEqual(
      expect.arrayContaining(["spec", "components", "builtins", "probe", "tl", "runtime"]),
    );
  });

  for (const name of packages) {
    it(`packages/${name}/src has no value-import cycle`, () => {
      const src = join(packagesDir, name, "src");
      const graph = new Map(sourceFiles(src).map((file) => [file, valueImports(file)]));
      expect(graph.size).toBeGreaterThan(0);
      const cycles = importCycles(graph).map((cycle) =>
        cycle.map((file) => relative(src, file).replaceAll("\\", "/")).join(" -> "),
      );
      expect(cycles, `value-import cycles in packages/${name}/src:\n  ${cycles.join("\n  ")}`).toEqual([]);
    });
  }
});

/**
 * The bare `@kb/...` packages that the sources of `dir` import (values or types), by file; the
 * tests' helpers (`test-support.ts`), which build machines of the built-ins, are left out.
 */
function kbImports(dir: string): string[] {
  return sourceFiles(dir)
    .filter((file) => !file.endsWith("test-support.ts"))
    .flatMap((file) =>
      [
        ...readFileSync(file, "utf8").matchAll(
          /^(?:import|export)[^;]*?from\s*["'](@kb\/[a-z-]+)(?:\/[a-z-]+)?["']/gm,
        ),
      ].map((match) => `${relative(dir, file).replaceAll("\\", "/")}: ${match[1] as string}`),
    );
}

describe("dependency direction", () => {
  it("@kb/components (the framework) imports nothing of @kb/builtins or @kb/probe: the registry comes from the caller", () => {
    const src = join(packagesDir, "components", "src");
    const imports = kbImports(src);
    expect(imports.some((line) => line.endsWith("@kb/spec"))).toBe(true); // the scan sees imports
    expect(imports.filter((line) => /@kb\/(builtins|probe)$/.test(line))).toEqual([]);
    // Nor holds them: the built-in models live in @kb/builtins, kb probe and MemoryHarness in @kb/probe.
    const own = sourceFiles(src).map((file) => relative(src, file).replaceAll("\\", "/"));
    expect(own.filter((file) => /^builtin\/|^probe|memory-harness/.test(file))).toEqual([]);
  });

  it("@kb/builtins imports nothing of @kb/probe: the test kit builds on the models, not the other way", () => {
    const src = join(packagesDir, "builtins", "src");
    const imports = kbImports(src);
    expect(imports.some((line) => line.endsWith("@kb/components"))).toBe(true);
    expect(imports.filter((line) => line.endsWith("@kb/probe"))).toEqual([]);
  });
});
