// What the perf suites share: usage errors, medians, aligned tables, JSON output.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

/** Prints a usage error for `script` and exits with code 2. */
export function failUsage(script: string, message: string): never {
  process.stderr.write(`${script}: ${message}\n\nRun with --help for usage.\n`);
  process.exit(2);
}

/** The median of `values` (the mean of the middle two for an even count). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

/**
 * Prints `rows` under `header` in aligned columns separated by two spaces; columns from
 * `rightFrom` on are right-aligned (numbers).
 */
export function printTable(
  header: readonly string[],
  rows: readonly string[][],
  rightFrom = header.length,
): void {
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => (row[column] as string).length)),
  );
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) =>
        column >= rightFrom ? cell.padStart(widths[column] as number) : cell.padEnd(widths[column] as number),
      )
      .join("  ")
      .trimEnd();
  process.stdout.write(`${line(header)}\n${line(widths.map((width) => "-".repeat(width)))}\n`);
  for (const row of rows) process.stdout.write(`${line(row)}\n`);
}

/** Writes `data` as pretty JSON to `file` (creating its folder) and says so. */
export function writeJson(file: string, data: unknown): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(data, null, 2)}\n`);
  process.stdout.write(`\nwrote ${file}\n`);
}

/** The options every perf suite takes, parsed, plus the suite's own string options. */
export interface SuiteOptions {
  readonly runs: number;
  readonly json: string | undefined;
  readonly extra: Readonly<Record<string, string | undefined>>;
}

/**
 * Parses `--runs N`, `--json FILE`, `--help` and the suite's own string options (`extra`) from
 * the command line. Prints `usage` and returns null for `--help`; a bad option or `--runs` value
 * is a usage error (exit 2).
 */
export function parseSuiteOptions(
  script: string,
  usage: string,
  extra: readonly string[],
  defaultRuns: number,
): SuiteOptions | null {
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({
      options: {
        ...Object.fromEntries(extra.map((name) => [name, { type: "string" as const }])),
        runs: { type: "string", default: String(defaultRuns) },
        json: { type: "string" },
        help: { type: "boolean", default: false },
      },
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (error) {
    failUsage(script, (error as Error).message);
  }
  if (values.help === true) {
    process.stdout.write(`${usage}\n`);
    return null;
  }
  const runs = Number(values.runs);
  if (!Number.isInteger(runs) || runs < 1)
    failUsage(script, `--runs must be a positive integer, got "${String(values.runs)}"`);
  return {
    runs,
    json: values.json as string | undefined,
    extra: Object.fromEntries(extra.map((name) => [name, values[name] as string | undefined])),
  };
}

/**
 * `topologies/<name>` of the repository, found by walking up from this module: the same from the
 * sources (`perf/*.ts`) and from the bundles (`dist/perf/*.js`).
 */
export function topologyFile(name: string): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const file = join(dir, "topologies", name);
    if (existsSync(file)) return file;
    const parent = dirname(dir);
    if (parent === dir)
      throw new Error(`cannot find topologies/${name} above ${fileURLToPath(import.meta.url)}`);
    dir = parent;
  }
}

/**
 * Runs the suite module `moduleUrl` (its `import.meta.url`) in a child node (`--expose-gc` and
 * this process's flags) with `args`, and returns the JSON of the last line it printed, so that
 * the child's peak RSS is its own. A child that fails is reported (`script: the <what> child
 * failed`) and exits this process with code 1.
 */
export function spawnChildReport<T>(
  script: string,
  moduleUrl: string,
  args: readonly string[],
  what: string,
): T {
  const result = spawnSync(
    process.execPath,
    ["--expose-gc", ...process.execArgv, fileURLToPath(moduleUrl), ...args],
    {
      encoding: "utf8",
      maxBuffer: 64 * 2 ** 20,
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  const last = result.stdout?.trim().split("\n").at(-1);
  if (result.status !== 0 || last === undefined || !last.startsWith("{")) {
    process.stderr.write(
      `${script}: the ${what} child failed (exit ${result.status ?? result.signal}):\n${result.stdout ?? ""}\n`,
    );
    process.exit(1);
  }
  return JSON.parse(last) as T;
}
