// What the perf suites share: usage errors, medians, aligned tables, JSON output.
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";

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
