// Gathers the declarations the playground's bench editor type-checks against: the lib files
// (ES2022 + Web Worker), the built `@kb/*` declarations (packages/*/dist/*.d.ts, after
// `turbo run build`), zod's, and every file those reference, with the package.json files that
// module resolution reads. Written as one JSON map, virtual path -> text, to
// src/editor/generated/types.json, which the TypeScript worker (src/editor/ts-worker.ts) loads.
//
// The set is what TypeScript itself loads for a file importing every package a bench may import
// (BENCH_PACKAGES of @kb/runtime), so it is exactly what the editor needs and nothing more.
//
// Usage: node scripts/gather-types.mjs            (from apps/playground)

import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { BENCH_COMPILER_OPTIONS, BENCH_PACKAGES } from "@kb/runtime";
import ts from "typescript";

const playground = fileURLToPath(new URL("..", import.meta.url));

/** The lib files a bench sees (`lib` of BENCH_COMPILER_OPTIONS): ES2022 and a Web Worker's globals. */
export const BENCH_LIBS = ts.convertCompilerOptionsFromJson({ lib: BENCH_COMPILER_OPTIONS.lib }, "/").options
  .lib;

/** Where the lib files sit in the virtual file system. */
export const LIB_DIR = "/lib";

/** The package.json fields TypeScript's module resolution reads; the rest is left out. */
const RESOLUTION_FIELDS = [
  "name",
  "version",
  "type",
  "types",
  "typings",
  "main",
  "module",
  "exports",
  "typesVersions",
];

/**
 * The declarations as a map from virtual path (`/lib/lib.es2022.d.ts`,
 * `/node_modules/@kb/tl/dist/index.d.ts`, `/node_modules/zod/package.json`) to text.
 * Throws when a package's declarations are missing (not built yet) or two copies of a package
 * differ.
 */
export function gatherTypes() {
  // What a bench may import (BENCH_PACKAGES: those kb run hands it and kb check checks it with).
  const packages = BENCH_PACKAGES;
  const entry = join(playground, "__kb_types_entry__.ts");
  const entryText = packages.map((name, i) => `import * as p${i} from "${name}";\n`).join("");
  const options = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    lib: BENCH_LIBS,
    types: [],
    // Keep node_modules/@kb/* paths (pnpm links them to packages/*): the virtual paths follow them.
    preserveSymlinks: true,
    skipLibCheck: true,
    noEmit: true,
  };
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (fileName, language, onError) =>
    fileName === entry
      ? ts.createSourceFile(fileName, entryText, language)
      : getSourceFile(fileName, language, onError);
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (fileName) => fileName === entry || fileExists(fileName);
  const program = ts.createProgram([entry], options, host);

  const unresolved = ts
    .getPreEmitDiagnostics(program)
    .filter((diagnostic) => diagnostic.file?.fileName === entry)
    .map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n"));
  if (unresolved.length > 0) {
    throw new Error(
      `gather-types: the playground's packages have no declarations to read (${unresolved.join("; ")}). ` +
        "Build them first: npx -y pnpm@10 exec turbo run build --filter @kb/playground^...",
    );
  }

  const files = {};
  const add = (path, text, from) => {
    if (files[path] !== undefined && files[path] !== text) {
      throw new Error(
        `gather-types: two different copies of ${path} (one from ${from}); align the versions.`,
      );
    }
    files[path] = text;
  };
  for (const source of program.getSourceFiles()) {
    const fileName = source.fileName;
    if (fileName === entry) continue;
    if (program.isSourceFileDefaultLibrary(source)) {
      add(`${LIB_DIR}/${fileName.split("/").pop()}`, source.text, fileName);
      continue;
    }
    const at = fileName.lastIndexOf("/node_modules/");
    if (at < 0) throw new Error(`gather-types: ${fileName} is outside node_modules; it cannot be placed.`);
    const virtual = fileName.slice(at);
    add(virtual, source.text, fileName);
    const root = packageRoot(fileName.slice(0, at + "/node_modules/".length), virtual);
    add(`/node_modules/${root.name}/package.json`, root.manifest, root.path);
  }
  return Object.fromEntries(Object.entries(files).sort(([a], [b]) => (a < b ? -1 : 1)));
}

/** The package a file under node_modules belongs to, with its package.json reduced to resolution fields. */
function packageRoot(modulesDir, virtual) {
  const parts = virtual.slice("/node_modules/".length).split("/");
  const name = parts[0]?.startsWith("@") ? `${parts[0]}/${parts[1]}` : (parts[0] ?? "");
  const path = join(modulesDir, name, "package.json").split("/").join(sep);
  const full = JSON.parse(readFileSync(path, "utf8"));
  const kept = Object.fromEntries(
    RESOLUTION_FIELDS.filter((key) => key in full).map((key) => [key, full[key]]),
  );
  return { name, path, manifest: JSON.stringify(kept) };
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const files = gatherTypes();
  const out = join(playground, "src/editor/generated/types.json");
  mkdirSync(dirname(out), { recursive: true });
  const text = JSON.stringify(files);
  writeFileSync(out, text);
  console.log(
    `gather-types: ${Object.keys(files).length} files, ${(text.length / 1024).toFixed(0)} KiB -> ${out}`,
  );
}
