// The code a run loads, as the manifest digests it (DESIGN §11, "the identity of a run covers its
// code"): a bench file and the files it imports by relative path, a plug-in's files. One digest
// for Node (`kb run`, `kb sweep`, `kb worker`, reading files) and the browser (the playground,
// with its editor's files): no file is read here, a caller's `read` gives the bytes. Their
// digest is `sourceFilesDigest` (manifest.ts).

/** A file's bytes, or its text (digested as its UTF-8 bytes). */
export type SourceBytes = string | Uint8Array;

/** Files by path relative to a bench's (or plug-in's) folder, `/`-separated: `lib/params.ts`. */
export type SourceFiles = Readonly<Record<string, SourceBytes>>;

// `import ... from "./x"`, `export ... from "./x"`, `import "./x"`, `import("./x")`, `require("./x")`.
const RELATIVE_IMPORT = /(?:\bfrom\s*|\bimport\s*\(?\s*|\brequire\s*\(\s*)["'](\.\.?\/[^"'\n]*)["']/g;

/** What a relative import may name besides its own path: `.js` written for `.ts`, left-out extensions, a folder's index. */
const EXTENSIONS = [".ts", ".mts", ".cts", ".js", ".mjs", ".cjs", ".json"];

/**
 * The paths a relative `specifier` imported from the file at `from` may name, in the order a
 * bundler tries them (TypeScript's rules): the path itself, `x.ts` for `x.js` (also `.mjs` ->
 * `.mts`, `.cjs` -> `.cts`), then each extension added, then `index` files. Paths are
 * `/`-separated; `..` and `.` are resolved.
 */
export function importCandidates(from: string, specifier: string): string[] {
  const base = joinPath(from.split("/").slice(0, -1), specifier);
  const js = /\.([cm]?)js$/.exec(base);
  const stem = js === null ? [] : [`${base.slice(0, -js[0].length)}.${js[1]}ts`];
  return [
    base,
    ...stem,
    ...EXTENSIONS.map((ext) => base + ext),
    ...EXTENSIONS.map((ext) => `${base}/index${ext}`),
  ];
}

/**
 * A bench's (or plug-in file's) `entry` and the files it imports by relative path, transitively,
 * by path relative to `entry`'s folder (`vector-add.ts`, `lib/params.ts`, `../shared/x.ts`).
 * Imports are found by reading the text (no code runs); an import that names no file is left
 * out (loading it fails anyway). `read(path)` gives a file's bytes by its `/`-separated path
 * (`entry`'s folder joined with the relative path, `..` resolved: `benches/lib/params.ts` for
 * `benches/vector-add.ts`), or `undefined` when there is no file or it is a folder.
 */
export function importedSourceFiles(
  entry: string,
  read: (path: string) => SourceBytes | undefined,
): Record<string, SourceBytes> {
  const folder = entry.split("/");
  const name = folder.pop() as string;
  const readAt = (path: string): SourceBytes | undefined => read(joinPath(folder, path));
  const files: Record<string, SourceBytes> = {};
  const pending = [name];
  while (pending.length > 0) {
    const path = pending.pop() as string;
    if (Object.hasOwn(files, path)) continue;
    const bytes = readAt(path);
    if (bytes === undefined) continue;
    files[path] = bytes;
    if (path.endsWith(".json")) continue;
    const text = typeof bytes === "string" ? bytes : new TextDecoder().decode(bytes);
    for (const match of text.matchAll(RELATIVE_IMPORT)) {
      const found = importCandidates(path, match[1] as string).find(
        (candidate) => Object.hasOwn(files, candidate) || readAt(candidate) !== undefined,
      );
      if (found !== undefined && !Object.hasOwn(files, found)) pending.push(found);
    }
  }
  return files;
}

/** `relative` joined to the folder `dir` (segments), `.` and `..` resolved; `..` past the start is kept. */
function joinPath(dir: readonly string[], relative: string): string {
  const parts = [...dir];
  for (const part of relative.split("/")) {
    if (part === "..") {
      if (parts.length > 0 && parts[parts.length - 1] !== "..") parts.pop();
      else parts.push("..");
    } else if (part !== "." && part !== "") parts.push(part);
  }
  return parts.join("/");
}
