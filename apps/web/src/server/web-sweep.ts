import { existsSync, statSync } from "node:fs";
import { dirname, extname, join, resolve } from "node:path";
import { formatSchemaIssues, KbError } from "@kb/errors";
import { csvHeader, csvRow, type SweepRow, sweepRowSchema } from "@kb/sweep";
import type { WebData } from "../api.js";
import type { SweepData, SweepWebRow } from "../sweep-api.js";
import { loadWebData, type TopologyLookup } from "./web-data.js";
import { DEFAULT_MAX_INPUT_BYTES, inputLines } from "./web-file.js";

/** The longest row of a sweep's results table kb web reads. */
export const MAX_SWEEP_ROW_BYTES = 16 * 1024 ** 2;

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
  /** How topology names become files (the CLI passes its own lookup). */
  readonly topologies: TopologyLookup;
  /** The results cache (`kb run --cache DIR`), where a point's run is `DIR/<digest>.json`. */
  readonly cacheDir?: string;
  /** Topology YAML every run page draws (default: the point's own, see {@link pointTopologyFile}). */
  readonly topology?: string;
  /** Where names are looked up from (default: the current directory). */
  readonly cwd?: string;
  /** The most read of the table and of each cached run, on disk and decompressed (default {@link DEFAULT_MAX_INPUT_BYTES}). */
  readonly maxInputBytes?: number;
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
  let firstLine = "";
  try {
    for await (const { text } of inputLines(file, DEFAULT_MAX_INPUT_BYTES, 64 * 1024)) {
      firstLine = text;
      break;
    }
  } catch {
    return false; // readWebInput reports what is wrong with the file
  }
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
export async function readSweepTable(
  file: string,
  maxBytes = DEFAULT_MAX_INPUT_BYTES,
): Promise<{ rows: SweepRow[]; warnings: string[] }> {
  const rows = new Map<string, SweepRow>();
  const warnings: string[] = [];
  for await (const { text, line, unterminated } of inputLines(file, maxBytes, MAX_SWEEP_ROW_BYTES)) {
    if (text.trim() === "") continue;
    const problem = rowProblem(text);
    if (typeof problem !== "string") {
      rows.set(problem.key, problem);
      continue;
    }
    if (unterminated) {
      warnings.push(`${file}:${line}: a last line cut short (${problem}) is left out.`);
      continue;
    }
    throw new KbError(
      "CLI_USAGE",
      `not a row of a sweep's results table (${problem}). kb web reads the results.jsonl kb sweep writes, one row per line; run kb sweep again to rewrite it.`,
      { context: { file, line } },
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
  return formatSchemaIssues(parsed.error.issues.slice(0, 3), { root: "(row)" }).join("; ");
}

/**
 * The topology `kb sweep` wrote for a point: `topologies/<first 16 hex digits of its key>.yaml`
 * beside the table; null for a key that does not start with 16 hex digits (a row's key never
 * names a path).
 */
export function pointTopologyFile(tableFile: string, key: string): string | null {
  if (!/^[0-9a-f]{16}/.test(key)) return null;
  return join(dirname(tableFile), "topologies", `${key.slice(0, 16)}.yaml`);
}

/** A manifest digest: 64 hex digits. */
const DIGEST = /^[0-9a-f]{64}$/;

function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/**
 * Reads a sweep's results table into what the sweep page shows, and a reader of its points' runs
 * from the results cache. Throws what {@link readSweepTable} throws, and a `KbError` when
 * `cacheDir` is not a folder.
 */
export async function loadSweepSource(file: string, options: SweepSourceOptions): Promise<SweepSource> {
  const cwd = options.cwd ?? process.cwd();
  const cacheDir = options.cacheDir === undefined ? null : resolve(cwd, options.cacheDir);
  if (cacheDir !== null && !isFolder(cacheDir)) {
    throw new KbError(
      "CLI_USAGE",
      `--cache ${options.cacheDir}: ${existsSync(cacheDir) ? "not a folder" : "no such folder"}. Pass the folder given to kb sweep --cache (where each run is <digest>.json).`,
    );
  }
  const maxBytes = options.maxInputBytes ?? DEFAULT_MAX_INPUT_BYTES;
  const { rows, warnings } = await readSweepTable(file, maxBytes);
  // A digest names a file in the cache: only a digest's 64 hex digits, never a path.
  const cachedFile = (digest: string | null) =>
    cacheDir === null || digest === null || !DIGEST.test(digest) ? null : join(cacheDir, `${digest}.json`);
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
        loaded = loadRun(file, row, cached, { ...options, cwd, maxBytes });
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
  options: { topologies: TopologyLookup; topology?: string | undefined; cwd: string; maxBytes: number },
): Promise<WebData> {
  const { topologies, topology, cwd, maxBytes } = options;
  const own = pointTopologyFile(tableFile, row.key);
  const hasOwn = own !== null && existsSync(own);
  const chosen = topology ?? (hasOwn ? own : undefined);
  const { data } = await loadWebData([cachedFile], {
    topologies,
    ...(chosen !== undefined ? { topology: chosen } : {}),
    cwd,
    maxInputBytes: maxBytes,
  });
  const drawn = `the diagram draws "${data.topology.name}" found by name (${data.topology.file}), not the point's own variant`;
  const missing =
    topology !== undefined || hasOwn
      ? []
      : own === null
        ? [
            `point ${row.point} has a key that does not start with 16 hex digits (not one kb sweep wrote), so its topology is not looked for: ${drawn}; pass --topology to choose one.`,
          ]
        : [
            `the topology kb sweep wrote for point ${row.point} (${own}) is missing, so ${drawn}; run kb sweep again to write it, or pass --topology.`,
          ];
  return {
    ...data,
    results: data.results.map((entry) => ({ ...entry, label: `point ${row.point}` })),
    warnings: [...missing, ...data.warnings],
    sweepPoint: { table: tableFile, point: row.point, values: row.values },
  };
}

/**
 * The sweep page's table as CSV (`GET /api/sweep.csv`, its "Download" link): the columns and
 * cells of kb sweep's results.csv (spreadsheet formulas neutralised), for the rows the page shows.
 */
export function sweepCsv(data: Pick<SweepData, "axes" | "metrics" | "rows">): string {
  return (
    csvHeader(data.axes, data.metrics) + data.rows.map((row) => csvRow(row, data.axes, data.metrics)).join("")
  );
}

/** The keys of `records` in the order they first appear. */
function namesOf(records: readonly Readonly<Record<string, unknown>>[]): string[] {
  const names = new Set<string>();
  for (const record of records) for (const name of Object.keys(record)) names.add(name);
  return [...names];
}
