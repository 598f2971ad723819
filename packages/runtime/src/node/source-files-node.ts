import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve, sep } from "node:path";
import type { PluginCodeSource } from "@kb/components";
import { pluginCodeSource } from "@kb/components/node";
import { sourceFilesDigest } from "../manifest.js";
import { importedSourceFiles } from "../source-files.js";

// The code a run loads, read from disk for the manifest, a sweep's point keys and a worker's
// checks: the files `importedSourceFiles` finds, digested by `sourceFilesDigest`, the functions
// the playground calls with its editor's files.

/** A file's bytes, or `undefined` when there is no file there (nothing, or a folder). */
function readSourceFile(path: string): Uint8Array | undefined {
  try {
    return statSync(path).isFile() ? readFileSync(path) : undefined;
  } catch {
    return undefined;
  }
}

/** `path` with `/` separators (a Windows path's `\` replaced), as `importedSourceFiles` takes it. */
const slashed = (path: string): string => path.split(sep).join("/");

/**
 * A bench file and the files it imports by relative path, transitively, by path relative to its
 * folder (`vector-add.ts`, `lib/params.ts`): the files its digest covers.
 */
export function benchFiles(file: string): Record<string, Uint8Array> {
  return importedSourceFiles(slashed(resolve(file)), readSourceFile) as Record<string, Uint8Array>;
}

/** The digest of a bench file and the files it imports (for a bench that imports none, the sha256 of its bytes). */
export function benchFileDigest(file: string): Promise<string> {
  return sourceFilesDigest(benchFiles(file));
}

/** The files of a package folder by relative path: every file but those under node_modules and dot-folders. */
export function folderSourceFiles(folder: string): Record<string, Uint8Array> {
  const files: Record<string, Uint8Array> = {};
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.name === "node_modules" || entry.name.startsWith(".")) continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile()) files[slashed(relative(folder, path))] = readFileSync(path);
    }
  };
  walk(folder);
  return files;
}

/**
 * The digest of a plug-in's code (`KbPlugin.codeSource`): a package folder's files (node_modules
 * and dot-folders left out), or a plug-in file and the files it imports by relative path.
 */
export function pluginCodeDigest(source: PluginCodeSource): Promise<string> {
  return sourceFilesDigest("folder" in source ? folderSourceFiles(source.folder) : benchFiles(source.file));
}

/**
 * The digest of the code a `plugins:` entry loads, resolved as `loadPlugins` resolves it (package
 * names from the folders `from`, paths from `relativeTo`) but without importing it; `null` when
 * the entry finds nothing.
 */
export async function pluginSourceDigest(
  entry: string,
  from: readonly string[],
  relativeTo: string,
): Promise<string | null> {
  const source = pluginCodeSource(entry, from, relativeTo);
  return source === null ? null : pluginCodeDigest(source);
}
