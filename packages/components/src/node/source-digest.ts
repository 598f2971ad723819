import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, extname, join, relative, resolve } from "node:path";

// Digests of the code a run loads (DESIGN §10): a plug-in's package folder or module graph, a
// bench file and the files it imports. Found without running code, deterministic: sorted
// relative paths and file bytes, no mtimes.

/** The files of a package folder, sorted: every file but those under node_modules and dot-folders. */
export function folderFiles(folder: string): string[] {
  const files: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.name === "node_modules" || entry.name.startsWith(".")) continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile()) files.push(path);
    }
  };
  walk(folder);
  return files.sort();
}

// `import ... from "./x"`, `export ... from "./x"`, `import "./x"`, `import("./x")`, `require("./x")`.
const RELATIVE_IMPORT = /(?:\bfrom\s*|\bimport\s*\(?\s*|\brequire\s*\(\s*)["'](\.\.?\/[^"'\n]*)["']/g;

/** The extensions a relative import may leave out or write as `.js` for a `.ts` file. */
const SOURCE_EXTENSIONS = [".ts", ".mts", ".cts", ".js", ".mjs", ".cjs", ".json"];

function resolveImport(from: string, specifier: string): string | undefined {
  const base = resolve(dirname(from), specifier);
  const ext = extname(base);
  const stem = [".js", ".mjs", ".cjs"].includes(ext) ? base.slice(0, -ext.length) : undefined;
  const candidates = [
    base,
    ...(stem === undefined ? [] : [`${stem}.ts`, `${stem}.mts`, `${stem}.cts`]),
    ...SOURCE_EXTENSIONS.map((each) => base + each),
    ...SOURCE_EXTENSIONS.map((each) => join(base, `index${each}`)),
  ];
  return candidates.find((candidate) => existsSync(candidate) && statSync(candidate).isFile());
}

/**
 * A source file and the files it imports by relative path, transitively (found by reading the
 * text, not by running it), sorted. An import that names no file is left out: loading it fails.
 */
export function moduleGraphFiles(entry: string): string[] {
  const seen = new Set<string>();
  const pending = [resolve(entry)];
  while (pending.length > 0) {
    const file = pending.pop() as string;
    if (seen.has(file)) continue;
    seen.add(file);
    if (extname(file) === ".json") continue;
    const text = readFileSync(file, "utf8");
    for (const match of text.matchAll(RELATIVE_IMPORT)) {
      const found = resolveImport(file, match[1] as string);
      if (found !== undefined && !seen.has(found)) pending.push(found);
    }
  }
  return [...seen].sort();
}

/**
 * The sha256 (hex) of files: each one's path relative to `root` and its bytes, in sorted order.
 * A single file hashes to the sha256 of its bytes (a lone bench file's digest is the one a
 * browser computes from its text).
 */
export function filesDigest(root: string, files: readonly string[]): string {
  const hash = createHash("sha256");
  if (files.length === 1) return hash.update(readFileSync(files[0] as string)).digest("hex");
  for (const file of [...files].sort()) {
    hash.update(`${relative(root, file).split("\\").join("/")}\0`);
    hash.update(readFileSync(file));
    hash.update("\0");
  }
  return hash.digest("hex");
}

/**
 * The digest of a bench file and the files it imports by relative path: for a bench that imports
 * none, the sha256 of its bytes.
 */
export function benchFileDigest(file: string): string {
  return filesDigest(dirname(resolve(file)), moduleGraphFiles(file));
}

/**
 * The digest of a plug-in's code: for a package folder (an installed package, or a path naming a
 * folder with package.json) its files but node_modules; for a plug-in file, the file and its
 * relative imports, transitively.
 */
export function pluginCodeDigest(target: { readonly folder: string } | { readonly file: string }): string {
  if ("folder" in target) return filesDigest(target.folder, folderFiles(target.folder));
  return filesDigest(dirname(target.file), moduleGraphFiles(target.file));
}
