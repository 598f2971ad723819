import { realpathSync } from "node:fs";
import { isAbsolute, relative, resolve } from "node:path";
import { KbError } from "@kb/errors";
import { readUserFile } from "@kb/errors/node";
import type { Bench } from "../bench.js";
import { dataFileParams } from "../data-files.js";

/** The largest data file digested (a trace of some millions of requests). */
const DATA_FILE_MAX_BYTES = 256 * 2 ** 20;

/**
 * The bytes of each data file the params name (`dataFileParam`s), by param, for the run's
 * manifest: only a regular file inside `root` (the folder kb runs in by default; symlinks
 * followed, no `..` or absolute path out of it). A missing file, one outside `root` or an
 * oversized one is a `RUNTIME_INVALID` naming the param and what to do.
 */
export function readDataFiles(
  bench: Bench,
  params: Readonly<Record<string, unknown>>,
  root: string = process.cwd(),
): Record<string, Uint8Array> {
  const files: Record<string, Uint8Array> = {};
  const named = dataFileParams(bench, params);
  if (named.length === 0) return files;
  const base = realpathSync(root);
  for (const { param, path } of named) {
    const full = resolve(base, path);
    let real: string;
    try {
      real = realpathSync(full);
    } catch {
      throw new KbError(
        "RUNTIME_INVALID",
        `bench "${bench.name}": param ${param}: file ${path} not found (looked for ${full}). Give a file inside ${base}.`,
      );
    }
    const inside = relative(base, real);
    if (inside.startsWith("..") || isAbsolute(inside)) {
      throw new KbError(
        "RUNTIME_INVALID",
        `bench "${bench.name}": param ${param}: ${path} is outside the folder kb runs in (${base}); a bench reads data files only inside it. Copy the file there, or run kb from a folder that holds it.`,
      );
    }
    files[param] = readUserFile(real, {
      what: `data file (param ${param})`,
      maxBytes: DATA_FILE_MAX_BYTES,
      code: "RUNTIME_INVALID",
    });
  }
  return files;
}
