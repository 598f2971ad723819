/// <reference lib="dom" />
import type { RunResults } from "@kb/runtime";
import type { WebResults } from "./api.js";
import { LAUNCH_COLUMNS, launchRows } from "./launch-model.js";
import { empty, table } from "./tables.js";

// The "Launches" section (a table per results file, a row per launch: launch-model.ts) and the
// "Bench report" section (the bench's own table, such as allreduce's nccl-tests sweep, which
// kb run prints after its summary).

/** A launches table per results file, each captioned with its label. */
export function launchesTables(entries: readonly WebResults[]): HTMLElement[] {
  if (entries.length === 0) return [empty("Needs a results file of kb run --json.")];
  return entries.map((entry) =>
    entry.results.launches.length === 0
      ? empty(`${entry.label}: no kernel launch.`)
      : table(
          [...LAUNCH_COLUMNS],
          launchRows(entry.results),
          `${entry.label}: ${entry.results.launches.length} launch(es)`,
        ),
  );
}

/** The bench's own table of each results file that has one (`results.report`). */
export function reportTables(entries: readonly WebResults[]): HTMLElement[] {
  const withReport = entries.filter((entry) => entry.results.report !== undefined);
  if (withReport.length === 0)
    return [empty("The bench returned no table of its own (allreduce and alltoall do).")];
  return withReport.map((entry) => {
    const report = entry.results.report as NonNullable<RunResults["report"]>;
    return table(
      report.columns,
      report.rows.map((row) =>
        row.map((cell) => (typeof cell === "number" ? { text: String(cell), className: "num" } : cell)),
      ),
      `${entry.label}: ${report.title}`,
    );
  });
}
