/// <reference lib="dom" />
import { BarChart, type BarSeriesOption, LineChart, type LineSeriesOption } from "echarts/charts";
import {
  DataZoomComponent,
  type DataZoomComponentOption,
  GridComponent,
  type GridComponentOption,
  LegendComponent,
  type LegendComponentOption,
  TooltipComponent,
  type TooltipComponentOption,
} from "echarts/components";
import { type ComposeOption, type EChartsType, getInstanceByDom, init, use } from "echarts/core";
import { CanvasRenderer } from "echarts/renderers";
import type { EnergyPart } from "./energy-model.js";
import { escapeHtml, formatNs, formatQuantity, formatSi } from "./format.js";
import type { KindValue, Series } from "./results-model.js";

// Only the parts of ECharts the page uses are bundled.
use([
  BarChart,
  LineChart,
  GridComponent,
  TooltipComponent,
  LegendComponent,
  DataZoomComponent,
  CanvasRenderer,
]);

type ChartOption = ComposeOption<
  | BarSeriesOption
  | LineSeriesOption
  | GridComponentOption
  | TooltipComponentOption
  | LegendComponentOption
  | DataZoomComponentOption
>;

/** Series colours of results files A, B, C, ... */
const RESULTS_COLOURS: readonly string[] = ["#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#76b7b2", "#e15759"];

/** The colour of results file (or series) `index`: A blue, B orange, ... */
export function resultsColour(index: number): string {
  return RESULTS_COLOURS[index % RESULTS_COLOURS.length] as string;
}

/** One bar series: a results file's values by kind. */
export interface KindSeries {
  readonly name: string;
  readonly values: readonly KindValue[];
  readonly colour?: string;
}

/**
 * Horizontal bars by component kind, one series per results file (grouped side by side).
 * `unit`: `fraction` draws percentages (the axis up to `max`, else to the largest bar), `GB/s` bandwidth.
 */
export function renderKindBars(
  element: HTMLElement,
  series: readonly KindSeries[],
  unit: "fraction" | "GB/s",
  options: { readonly kinds?: readonly string[]; readonly max?: number } = {},
): EChartsType {
  const kinds =
    options.kinds ?? [...new Set(series.flatMap((entry) => entry.values.map((value) => value.kind)))].sort();
  element.style.height = `${Math.max(220, kinds.length * (10 + 12 * series.length) + 90)}px`;
  const chart = existingOrNew(element);
  const scale = unit === "fraction" ? 100 : 1;
  const option: ChartOption = {
    animation: false,
    grid: { left: 110, right: 30, top: series.length > 1 ? 36 : 12, bottom: 30 },
    legend: series.length > 1 ? { top: 4, type: "scroll" } : { show: false },
    tooltip: {
      trigger: "axis",
      axisPointer: { type: "shadow" },
      valueFormatter: (value) =>
        unit === "fraction" ? `${Number(value).toFixed(1)}%` : formatSi(Number(value) * 1e9, "B/s"),
    },
    xAxis: {
      type: "value",
      // Percentages: the given scale (to compare two charts), else up to the largest bar, at most 100 %.
      ...(unit === "fraction"
        ? {
            max:
              options.max !== undefined
                ? options.max * 100
                : ({ max }: { max: number }) => Math.min(100, Math.ceil(max / 10) * 10),
          }
        : {}),
      axisLabel: {
        formatter: (value: number) => (unit === "fraction" ? `${value}%` : formatSi(value * 1e9, "B/s")),
      },
    },
    yAxis: { type: "category", data: [...kinds], inverse: true, axisLabel: { fontSize: 11 } },
    series: series.map((entry, index) => {
      const byKind = new Map(entry.values.map((value) => [value.kind, value.value]));
      return {
        type: "bar",
        name: entry.name,
        barMaxWidth: 14,
        itemStyle: { color: entry.colour ?? resultsColour(index) },
        data: kinds.map((kind) => {
          const value = byKind.get(kind);
          return value === undefined ? null : value * scale;
        }),
      } satisfies BarSeriesOption;
    }),
  };
  chart.setOption(option, true);
  return chart;
}

/** One run's energy parts (by kind or by component) for {@link renderEnergyBars}. */
export interface EnergySeries {
  readonly name: string;
  readonly parts: readonly EnergyPart[];
}

/**
 * Horizontal bars of energy, J, one stacked bar per run and name: dynamic (the run's colour) then
 * static (the same, pale). `names` in order, top first.
 */
export function renderEnergyBars(
  element: HTMLElement,
  series: readonly EnergySeries[],
  names: readonly string[],
): EChartsType {
  element.style.height = `${Math.max(200, names.length * (10 + 14 * series.length) + 90)}px`;
  const chart = existingOrNew(element);
  const option: ChartOption = {
    animation: false,
    grid: { left: 170, right: 30, top: 36, bottom: 30 },
    legend: { top: 4, type: "scroll" },
    tooltip: {
      trigger: "axis",
      axisPointer: { type: "shadow" },
      valueFormatter: (value) => (value === null ? "-" : formatQuantity(Number(value), "J")),
    },
    xAxis: { type: "value", axisLabel: { formatter: (value: number) => formatQuantity(value, "J") } },
    yAxis: { type: "category", data: [...names], inverse: true, axisLabel: { fontSize: 11 } },
    series: series.flatMap((entry, index) => {
      const byName = new Map(entry.parts.map((part) => [part.name, part]));
      const label = series.length > 1 ? `${entry.name}: ` : "";
      return (["dynamicJ", "staticJ"] as const).map(
        (field) =>
          ({
            type: "bar",
            name: `${label}${field === "dynamicJ" ? "dynamic" : "static"}`,
            stack: `run${index}`,
            barMaxWidth: 14,
            itemStyle: { color: resultsColour(index), opacity: field === "dynamicJ" ? 1 : 0.4 },
            data: names.map((name) => byName.get(name)?.[field] ?? null),
          }) satisfies BarSeriesOption,
      );
    }),
  };
  chart.setOption(option, true);
  return chart;
}

/** Step lines over simulated time (HBM GB/s per cube), zoomable. */
export function renderTimeSeries(element: HTMLElement, series: readonly Series[], unit: string): EChartsType {
  const chart = existingOrNew(element);
  const option: ChartOption = {
    animation: false,
    grid: { left: 70, right: 30, top: 36, bottom: 60 },
    legend: { top: 4, type: "scroll" },
    tooltip: {
      trigger: "axis",
      formatter: (params) => {
        const list = Array.isArray(params) ? params : [params];
        const first = list[0];
        const time = Array.isArray(first?.value) ? Number(first.value[0]) : 0;
        return [
          escapeHtml(formatNs(time)),
          ...list.map(
            (item) =>
              `${item.marker ?? ""}${escapeHtml(item.seriesName ?? "")}: ${Array.isArray(item.value) ? Number(item.value[1]).toFixed(1) : ""} ${unit}`,
          ),
        ].join("<br>");
      },
    },
    xAxis: {
      type: "value",
      name: "simulated time",
      axisLabel: { formatter: (value: number) => formatNs(value) },
    },
    yAxis: { type: "value", name: unit },
    dataZoom: [
      { type: "inside", xAxisIndex: 0 },
      { type: "slider", xAxisIndex: 0, bottom: 8, labelFormatter: (value: number) => formatNs(value) },
    ],
    series: series.map(
      (entry, index) =>
        ({
          type: "line",
          name: entry.name,
          step: "end",
          showSymbol: false,
          sampling: "lttb",
          lineStyle: { width: 1.2 },
          itemStyle: { color: resultsColour(index) },
          data: entry.points.map((point) => [point[0], point[1]]),
        }) satisfies LineSeriesOption,
    ),
  };
  chart.setOption(option, true);
  return chart;
}

/** The chart already on `element`, or a new one (a re-render replaces its option). */
export function existingOrNew(element: HTMLElement): EChartsType {
  return (
    (getInstanceByDom(element) as EChartsType | undefined) ?? init(element, null, { renderer: "canvas" })
  );
}
