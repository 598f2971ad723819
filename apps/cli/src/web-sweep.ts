import { existsSync } from "node:fs";
import { open, readFile } from "node:fs/promises";
import { dirname, extname, join, resolve } from "node:path";
import { KbError } from "@kb/errors";
import { type SweepRow, sweepRowSchema } from "@kb/sweep";
import type { WebData } from "@kb/web-ui/api";
import type { SweepData, SweepWebRow } from "@kb/web-ui/sweep-api";
import { loadWebData } from "./web-data.js";

// `kb web results.jsonl`: a sweep's results table (kb sweep's results.jsonl) for the sweep page,
// and the run of each point whose results are in the results cache (kb sweep --cache DIR) for the
// normal page at /?run=<digest>, drawn on the point's own topology (topologies/<key 16>.yaml,
// which kb sweep writes beside the table).

/** What `kb web` serves for a sweep: `/api/sweep`, and `/api/data?run=<digest>`. */
export interface SweepSource {
  readonly data: SweepData;
  /**
   * The `WebData` of the cached run of a point of the sweep, or null when `digest` is no point's
   * or its results are not in the cache. Throws the `KbError` of a cached file that is not results.
   */
  run(digest: string): Promise<WebData | null>;
}

/** Options of {@link loadSweepSource}. */
export interface SweepSourceOptions {
  /** The results cache (`kb run --cache DIR`), where a point's run is `DIR/<digest>.json`. */
  readonly cacheDir?: string;
  /** Topology YAML every run page draws (default: the point's own, see {@link pointTopologyFile}). */
  readonly topology?: string;
  /** Where names are looked up from (default: the current directory). */
  readonly cwd?: string;
}

/**
 * The one sweep table among `files`, or null when there is none. A sweep table is a `.jsonl` file
 * or one whose first line is a JSON object with a `point`, a `key` and a `status` (a row of
 * `kb sweep`). Throws a `KbError` when a sweep table comes with other files: the sweep page shows
 * one sweep on its own.
 */
export async function sweepTableIn(files: readonly string[]): Promise<string | null> {
  const tables: string[] = [];
  for (const file of files) if (await isSweepTable(file)) tables.push(file);
  if (tables.length === 0) return null;
  if (files.length > 1) {
    throw new KbError(
      "CLI_USAGE",
      `${tables[0]} is a sweep's results table, given with ${files.length - 1} other file(s): kb web shows a sweep on its own (its points' runs open from its page). Run kb web ${tables[0]} alone.`,
    );
  }
  return tables[0] as string;
}

async function isSweepTable(file: string): Promise<boolean> {
  if (extname(file).toLowerCase() === ".jsonl") return true;
  let head: string;
  try {
    const handle = await open(file, "r");
    try {
      const buffer = Buffer.alloc(64 * 1024);
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
      head = buffer.subarray(0, bytesRead).toString("utf8");
    } finally {
      await handle.close();
    }
  } catch {
    return false; // readWebInput reports what is wrong with the file
  }
  const firstLine = head.split("\n", 1)[0] ?? "";
  try {
    const json: unknown = JSON.parse(firstLine);
    return typeof json === "object" && json !== null && "point" in json && "key" in json && "status" in json;
  } catch {
    return false;
  }
}

/**
 * Reads a sweep's results table: one `SweepRow` per line (the last row of a point key wins, as a
 * resumed `kb sweep` reads it). A last line that does not parse and has no newline (a write cut
 * short) is dropped with a warning. Throws a `KbError` at `file:line` for any other line that is
 * not a row, and when the file cannot be read or holds no row.
 */
export async function readSweepTable(file: string): Promise<{ rows: SweepRow[]; warnings: string[] }> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    throw new KbError("CLI_USAGE", `cannot read the sweep's results table: ${(error as Error).message}`, {
      context: { file },
      cause: error,
    });
  }
  const lines = text.split("\n");
  const rows = new Map<string, SweepRow>();
  const warnings: string[] = [];
  for (const [index, line] of lines.entries()) {
    if (line.trim() === "") continue;
    const problem = rowProblem(line);
    if (typeof problem !== "string") {
      rows.set(problem.key, problem);
      continue;
    }
    if (index === lines.length - 1) {
      warnings.push(`${file}:${index + 1}: a last line cut short (${problem}) is left out.`);
      continue;
    }
    throw new KbError(
      "CLI_USAGE",
      `not a row of a sweep's results table (${problem}). kb web reads the results.jsonl kb sweep writes, one row per line; run kb sweep again to rewrite it.`,
      { context: { file, line: index + 1 } },
    );
  }
  if (rows.size === 0) {
    throw new KbError(
      "CLI_USAGE",
      "a sweep's results table with no row: no point has finished yet. Run kb sweep SPEC first.",
      { context: { file } },
    );
  }
  return { rows: [...rows.values()], warnings };
}

/** The row a line holds, or what is wrong with it. */
function rowProblem(line: string): SweepRow | string {
  let json: unknown;
  try {
    json = JSON.parse(line);
  } catch (error) {
    return `not JSON: ${(error as Error).message}`;
  }
  const parsed = sweepRowSchema.safeParse(json);
  if (parsed.success) return parsed.data;
  return parsed.error.issues
    .slice(0, 3)
    .map((issue) => `${issue.path.join(".") || "(row)"}: ${issue.message}`)
    .join("; ");
}

/** The topology `kb sweep` wrote for a point: `topologies/<first 16 hex digits of its key>.yaml` beside the table. */
export function pointTopologyFile(tableFile: string, key: string): string {
  return join(dirname(tableFile), "topologies", `${key.slice(0, 16)}.yaml`);
}

/**
 * Reads a sweep's results table into what the sweep page shows, and a reader of its points' runs
 * from the results cache. Throws what {@link readSweepTable} throws, and a `KbError` when
 * `cacheDir` is not a folder.
 */
export async function loadSweepSource(file: string, options: SweepSourceOptions = {}): Promise<SweepSource> {
  const cwd = options.cwd ?? process.cwd();
  const cacheDir = options.cacheDir === undefined ? null : resolve(cwd, options.cacheDir);
  if (cacheDir !== null && !existsSync(cacheDir)) {
    throw new KbError(
      "CLI_USAGE",
      `--cache ${options.cacheDir}: no such folder. Pass the folder given to kb sweep --cache (where each run is <digest>.json).`,
    );
  }
  const { rows, warnings } = await readSweepTable(file);
  const cachedFile = (digest: string | null) =>
    cacheDir === null || digest === null ? null : join(cacheDir, `${digest}.json`);
  const webRows: SweepWebRow[] = rows.map((row) => {
    const cached = cachedFile(row.digest);
    return { ...row, cached: cached !== null && existsSync(cached) };
  });
  const data: SweepData = {
    schema: "kb.sweep-web/1",
    file,
    cacheDir,
    axes: namesOf(rows.map((row) => row.values)),
    metrics: namesOf(rows.map((row) => row.metrics)),
    rows: webRows,
    warnings,
  };
  const byDigest = new Map(rows.filter((row) => row.digest !== null).map((row) => [row.digest, row]));
  const runs = new Map<string, Promise<WebData>>();
  return {
    data,
    run(digest) {
      const row = byDigest.get(digest);
      const cached = cachedFile(digest);
      if (row === undefined || cached === null || !existsSync(cached)) return Promise.resolve(null);
      let loaded = runs.get(digest);
      if (loaded === undefined) {
        loaded = loadRun(file, row, cached, options.topology, cwd);
        // A failed read is tried again on the next request.
        loaded.catch(() => runs.delete(digest));
        runs.set(digest, loaded);
      }
      return loaded;
    },
  };
}

/** The page's data of one point's cached run, on the point's topology. */
async function loadRun(
  tableFile: string,
  row: SweepRow,
  cachedFile: string,
  topology: string | undefined,
  cwd: string,
): Promise<WebData> {
  const own = pointTopologyFile(tableFile, row.key);
  const hasOwn = existsSync(own);
  const chosen = topology ?? (hasOwn ? own : undefined);
  const { data } = await loadWebData([cachedFile], {
    ...(chosen !== undefined ? { topology: chosen } : {}),
    cwd,
  });
  const missing =
    topology === undefined && !hasOwn
      ? [
          `the topology kb sweep wrote for point ${row.point} (${own}) is missing, so the diagram draws "${data.topology.name}" found by name (${data.topology.file}), not the point's own variant; run kb sweep again to write it, or pass --topology.`,
        ]
      : [];
  return {
    ...data,
    results: data.results.map((entry) => ({ ...entry, label: `point ${row.point}` })),
    warnings: [...missing, ...data.warnings],
  };
}

/** The keys of `records` in the order they first appear. */
function namesOf(records: readonly Readonly<Record<string, unknown>>[]): string[] {
  const names = new Set<string>();
  for (const record of records) for (const name of Object.keys(record)) names.add(name);
  return [...names];
}
