import type { WebResults } from "./api.js";
import type { Series } from "./results-model.js";

// The bench report's series over simulated time (`results.report.series`: llama-serve's KV-cache
// occupancy, batch and batch tokens), grouped into charts: report-series.ts draws them.

/** One chart: a series name, its unit and each results file's points. */
export interface ReportSeriesChart {
  readonly name: string;
  readonly unit: string;
  /** One line per results file that has the series, named by the file's label. */
  readonly lines: readonly Series[];
}

/** The charts of the results' report series, by series name in order of first appearance. */
export function reportSeriesCharts(entries: readonly WebResults[]): ReportSeriesChart[] {
  const charts = new Map<string, { unit: string; lines: Series[] }>();
  for (const entry of entries) {
    for (const series of entry.results.report?.series ?? []) {
      const chart = charts.get(series.name) ?? { unit: series.unit, lines: [] };
      chart.lines.push({
        name: entry.label,
        points: series.x.map((x, i) => [x, series.y[i] ?? 0] as const),
      });
      charts.set(series.name, chart);
    }
  }
  return [...charts].map(([name, { unit, lines }]) => ({ name, unit, lines }));
}
