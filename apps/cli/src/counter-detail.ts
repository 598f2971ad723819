import { formatNumber, formatPercent, groupDigits } from "@kb/errors";
import type { ModelStatRow } from "@kb/runtime";

/** What {@link formatCounterDetail} reads of a results row. */
export interface CounterDetailRow {
  readonly kind: string;
  readonly stats?: readonly ModelStatRow[] | undefined;
}

/**
 * The lines after `kb run`'s model counters (issue 37 point 5): the row-buffer hit rate when the
 * model counts `row_hits` (of the runs counted by `row_hits`, `row_misses` and `row_conflicts`),
 * and the busiest port's counts when the counters are per port: the port with the most `rd + wr`
 * (an HBM pseudo-channel, `pcN`), or, without those, the most of every count summed.
 */
export function formatCounterDetail(row: CounterDetailRow): string[] {
  const stats = row.stats ?? [];
  const byName = new Map(stats.map((stat) => [stat.name, stat]));
  const lines: string[] = [];
  const hits = byName.get("row_hits");
  if (hits !== undefined) {
    const runs = ["row_hits", "row_misses", "row_conflicts"].reduce(
      (sum, name) => sum + (byName.get(name)?.total ?? 0),
      0,
    );
    lines.push(
      runs > 0
        ? `  row-buffer hit rate ${formatPercent(hits.total / runs)} (${groupDigits(hits.total)} row hits of ${groupDigits(runs)} runs: hits, misses, conflicts)`
        : "  row-buffer hit rate - (no runs)",
    );
  }
  const perPort = stats.filter((stat) => stat.perPort !== undefined && stat.perPort.length > 0);
  const ports = Math.min(...perPort.map((stat) => (stat.perPort as number[]).length));
  if (perPort.length === 0 || ports < 2) return lines;
  const bursts = perPort.filter((stat) => stat.name === "rd" || stat.name === "wr");
  const ranked = bursts.length > 0 ? bursts : perPort.filter((stat) => stat.unit === "count");
  if (ranked.length === 0) return lines;
  let busiest = 0;
  let most = Number.NEGATIVE_INFINITY;
  for (let port = 0; port < ports; port++) {
    const value = ranked.reduce((sum, stat) => sum + ((stat.perPort as number[])[port] as number), 0);
    if (value > most) {
      most = value;
      busiest = port;
    }
  }
  const name = `${row.kind === "hbm_ctrl" ? "pc" : "port"}${busiest}`;
  const counts = perPort.map((stat) => {
    const value = (stat.perPort as number[])[busiest] as number;
    const text = Number.isInteger(value) ? groupDigits(value) : formatNumber(value, 4);
    return `${stat.name} ${text}${stat.unit === "count" ? "" : ` ${stat.unit}`}`;
  });
  lines.push(
    `  busiest ${name} (${bursts.length > 0 ? "most RD + WR" : "the most counted"}): ${counts.join(", ")}`,
  );
  return lines;
}
