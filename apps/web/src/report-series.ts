/// <reference lib="dom" />
import type { EChartsType } from "echarts/core";
import type { WebResults } from "./api.js";
import { renderTimeSeries } from "./charts.js";
import { reportSeriesCharts } from "./report-series-model.js";

// The bench report's series over simulated time (`results.report.series`: llama-serve's KV-cache
// occupancy, batch and batch tokens), a step chart each (report-series-model.ts), the results files
// overlaid.

/**
 * Draws the report series of `entries` below the bench report's tables in `section` (a
 * `#report-series` block it makes or empties), each chart handed to `keep` by its element id.
 */
export function showReportSeries(
  section: HTMLElement,
  entries: readonly WebResults[],
  keep: (id: string, chart: EChartsType) => void,
): void {
  let block = section.querySelector<HTMLElement>("#report-series");
  if (block === null) {
    block = document.createElement("div");
    block.id = "report-series";
    section.append(block);
  }
  block.replaceChildren();
  for (const [index, chart] of reportSeriesCharts(entries).entries()) {
    const title = document.createElement("h3");
    title.textContent = `${chart.name} (${chart.unit}) over simulated time`;
    const element = document.createElement("div");
    element.id = `report-series-${index}`;
    element.className = "chart";
    element.style.height = "260px";
    block.append(title, element);
    keep(element.id, renderTimeSeries(element, chart.lines, chart.unit));
  }
}
