import { readFileSync, statSync } from "node:fs";
import { resolve } from "node:path";
import type { WebResults } from "../api.js";
import { siteFiles } from "../source-model.js";

/** The largest kernel file the source view shows, bytes. */
export const MAX_SOURCE_BYTES = 1 << 20;

/** Kernel files a source view may show: source code only, never any file a results JSON names. */
const SOURCE_FILE = /\.(?:[cm]?ts|[cm]?js|tsx|jsx)$/;

/**
 * The text of the kernel files the results' `sites` name (`file:line`, the file relative to the
 * directory kb run ran in), read from `cwd`: the source view's `WebData.sources`. A file that is
 * missing, not a regular source file or over {@link MAX_SOURCE_BYTES} is left out (the view then
 * lists its lines without text).
 */
export function readKernelSources(results: readonly WebResults[], cwd: string): Record<string, string> {
  const sources: Record<string, string> = {};
  for (const entry of results) {
    for (const file of siteFiles(entry.results)) {
      if (Object.hasOwn(sources, file) || !SOURCE_FILE.test(file)) continue;
      const path = resolve(cwd, file);
      try {
        const stat = statSync(path);
        if (stat.isFile() && stat.size <= MAX_SOURCE_BYTES) sources[file] = readFileSync(path, "utf8");
      } catch {
        // Missing or unreadable: the view lists the file's lines without text.
      }
    }
  }
  return sources;
}
