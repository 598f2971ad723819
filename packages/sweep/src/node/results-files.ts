import {
  appendFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { KbError } from "@kb/errors";
import { outputError } from "../output-error.js";
import { csvHeader, csvRow, jsonlRow, type SweepRow, sweepRowSchema } from "../table.js";

/** The files of a sweep's results folder. */
export const RESULTS_JSONL = "results.jsonl";
export const RESULTS_CSV = "results.csv";

/**
 * A sweep's results table on disk: `results.jsonl` (one row per line, the record a resumed sweep
 * reads) and `results.csv` (the same rows for a spreadsheet). Each finished point appends one
 * whole line to each with a single write, so an interrupted sweep leaves whole rows only; a line
 * cut short by a crash of the machine is dropped when the table is opened again.
 */
export class ResultsTable {
  readonly #jsonl: string;
  readonly #csv: string;
  readonly #axes: readonly string[];
  readonly #metrics: readonly string[];
  readonly #rows = new Map<string, SweepRow>();

  private constructor(dir: string, axes: readonly string[], metrics: readonly string[]) {
    this.#jsonl = join(dir, RESULTS_JSONL);
    this.#csv = join(dir, RESULTS_CSV);
    this.#axes = axes;
    this.#metrics = metrics;
  }

  /**
   * Opens (creating) the table in `dir`. The rows already in its JSONL are read back (the last
   * row of a point wins); with `retryFailed`, failed rows are dropped so their points run again.
   * Both files are then rewritten from those rows (temporary file and rename), so the CSV has
   * the current spec's columns and no row appears twice. A line that is not a row (other than a
   * last line cut short) is a `SWEEP_INVALID` error naming it.
   */
  static open(
    dir: string,
    axes: readonly string[],
    metrics: readonly string[],
    options: { retryFailed?: boolean } = {},
  ): ResultsTable {
    try {
      mkdirSync(dir, { recursive: true });
    } catch (error) {
      throw outputError(dir, error);
    }
    const table = new ResultsTable(dir, axes, metrics);
    if (existsSync(table.#jsonl)) {
      if (!statSync(table.#jsonl).isFile()) {
        // A device or a FIFO would be read for ever (/dev/zero) or block (a FIFO).
        throw new KbError(
          "SWEEP_INVALID",
          `${table.#jsonl} is not a regular file; a sweep's results table is. Move it away, or give another --out.`,
          { context: { file: table.#jsonl } },
        );
      }
      const lines = readFileSync(table.#jsonl, "utf8").split("\n");
      for (const [index, line] of lines.entries()) {
        if (line.trim() === "") continue;
        const row = parseRow(line);
        if (row === null) {
          // Only the last line can be a partial write.
          if (index === lines.length - 1) continue;
          throw new KbError(
            "SWEEP_INVALID",
            `${table.#jsonl}:${index + 1}: not a row of a sweep's results; move the file away to start afresh.`,
            { context: { file: table.#jsonl } },
          );
        }
        if (options.retryFailed === true && row.status === "failed") table.#rows.delete(row.key);
        else table.#rows.set(row.key, row);
      }
    }
    const rows = [...table.#rows.values()];
    replaceFile(table.#jsonl, rows.map(jsonlRow).join(""));
    replaceFile(
      table.#csv,
      csvHeader(axes, metrics) + rows.map((row) => csvRow(row, axes, metrics)).join(""),
    );
    return table;
  }

  /** The finished row of a point key, if any. */
  row(key: string): SweepRow | undefined {
    return this.#rows.get(key);
  }

  /** Every row, in the order they were written. */
  rows(): SweepRow[] {
    return [...this.#rows.values()];
  }

  /**
   * Appends a finished point's row to both files. A file that cannot be written (a full disk) is
   * a `SWEEP_OUTPUT` error naming it; the row is then not in the table (a part of its line that
   * reached the disk is the torn last line that {@link open} drops), the rows before stay whole.
   */
  append(row: SweepRow): void {
    appendTo(this.#jsonl, jsonlRow(row));
    this.#rows.set(row.key, row);
    appendTo(this.#csv, csvRow(row, this.#axes, this.#metrics));
  }
}

function parseRow(line: string): SweepRow | null {
  try {
    const parsed = sweepRowSchema.safeParse(JSON.parse(line));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

function appendTo(path: string, text: string): void {
  try {
    appendFileSync(path, text);
  } catch (error) {
    throw outputError(path, error);
  }
}

/** Writes `path` whole or not at all: a temporary file, then a rename (the temporary file removed on failure). */
function replaceFile(path: string, text: string): void {
  const temp = `${path}.tmp-${process.pid}`;
  try {
    writeFileSync(temp, text);
    renameSync(temp, path);
  } catch (error) {
    rmSync(temp, { force: true });
    throw outputError(path, error);
  }
}
