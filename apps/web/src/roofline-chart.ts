/// <reference lib="dom" />
import { LineChart, type LineSeriesOption, ScatterChart, type ScatterSeriesOption } from "echarts/charts";
import {
  GridComponent,
  type GridComponentOption,
  LegendComponent,
  type LegendComponentOption,
  TooltipComponent,
  type TooltipComponentOption,
} from "echarts/components";
import { type ComposeOption, type EChartsType, use } from "echarts/core";
import { CanvasRenderer } from "echarts/renderers";
import { existingOrNew, resultsColour } from "./charts.js";
import { escapeHtml, formatNumber, formatSi } from "./format.js";
import type { RooflineMark, RooflineView } from "./roofline-model.js";

// The roofline chart (log-log: FLOP/byte against FLOP/s) of one launch, or of two overlaid (A and
// B of the comparison). Draws a RooflineView of roofline-model.ts; computes nothing of its own.

use([LineChart, ScatterChart, GridComponent, TooltipComponent, LegendComponent, CanvasRenderer]);

type ChartOption = ComposeOption<
  | LineSeriesOption
  | ScatterSeriesOption
  | GridComponentOption
  | TooltipComponentOption
  | LegendComponentOption
>;

/** The symbol of each traffic's point. */
const SYMBOLS: Readonly<Record<RooflineMark["traffic"], string>> = {
  hbm: "circle",
  minimal: "diamond",
  link: "triangle",
};

/**
 * Draws `view` on `element` and sets `data-points`, `data-ceilings` and `data-slopes` on it (the
 * counts drawn, for tests). Returns the chart.
 */
export function renderRoofline(element: HTMLElement, view: RooflineView): EChartsType {
  element.style.height = "380px";
  const chart = existingOrNew(element);
  const lines: LineSeriesOption[] = view.lines.map((line) => ({
    type: "line",
    name: line.name,
    data: [
      [line.from[0], line.from[1]],
      [line.to[0], line.to[1]],
    ],
    showSymbol: false,
    silent: true,
    lineStyle: {
      width: line.kind === "slope" ? 1.6 : 1.2,
      type: line.kind === "slope" ? "solid" : "dashed",
      color:
        line.entry === null || !hasSeveral(view)
          ? line.kind === "slope"
            ? "#555"
            : "#888"
          : resultsColour(line.entry),
    },
    endLabel: { show: true, formatter: line.name, fontSize: 11, color: "#333" },
    labelLayout: { hideOverlap: true },
  }));
  const marks: ScatterSeriesOption[] = view.marks.map((mark) => ({
    type: "scatter",
    name: mark.name,
    symbol: SYMBOLS[mark.traffic],
    symbolSize: 12,
    itemStyle: { color: resultsColour(mark.entry), borderColor: "#fff", borderWidth: 1 },
    data: [[mark.x, mark.y, mark.bytes]],
    z: 5,
  }));
  const option: ChartOption = {
    animation: false,
    grid: { left: 80, right: 230, top: 40, bottom: 50 },
    legend: { top: 4, type: "scroll", data: view.marks.map((mark) => mark.name) },
    tooltip: {
      trigger: "item",
      formatter: (params) => {
        const item = Array.isArray(params) ? params[0] : params;
        const value = item?.value as readonly number[] | undefined;
        if (value === undefined) return "";
        return [
          `${item?.marker ?? ""}${escapeHtml(item?.seriesName ?? "")}`,
          `${formatNumber(Number(value[0]), 3)} FLOP/byte (${formatSi(Number(value[2]), "B")})`,
          formatSi(Number(value[1]), "FLOP/s"),
        ].join("<br>");
      },
    },
    xAxis: {
      type: "log",
      name: "arithmetic intensity (FLOP/byte)",
      nameLocation: "middle",
      nameGap: 28,
      min: view.x[0],
      max: view.x[1],
      axisLabel: { formatter: (value: number) => formatNumber(value, 3) },
    },
    yAxis: {
      type: "log",
      name: "FLOP/s",
      min: view.y[0],
      max: view.y[1],
      axisLabel: { formatter: (value: number) => formatSi(value, "") },
    },
    series: [...lines, ...marks],
  };
  chart.setOption(option, true);
  element.dataset.points = String(view.marks.length);
  element.dataset.ceilings = String(view.lines.filter((line) => line.kind === "ceiling").length);
  element.dataset.slopes = String(view.lines.filter((line) => line.kind === "slope").length);
  return chart;
}

function hasSeveral(view: RooflineView): boolean {
  return view.marks.some((mark) => mark.entry > 0) || view.lines.some((line) => (line.entry ?? 0) > 0);
}
