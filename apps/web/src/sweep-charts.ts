/// <reference lib="dom" />
import {
  LineChart,
  type LineSeriesOption,
  ParallelChart,
  type ParallelSeriesOption,
  ScatterChart,
  type ScatterSeriesOption,
} from "echarts/charts";
import {
  GridComponent,
  type GridComponentOption,
  LegendComponent,
  type LegendComponentOption,
  ParallelComponent,
  TooltipComponent,
  type TooltipComponentOption,
} from "echarts/components";
import { type ComposeOption, type EChartsType, getInstanceByDom, init, use } from "echarts/core";
import { CanvasRenderer } from "echarts/renderers";
import { escapeHtml } from "./format.js";
import { metricName } from "./metric-names.js";
import type { SweepData, SweepWebRow } from "./sweep-api.js";
import {
  type AxisColours,
  cellText,
  logScaleOf,
  type ParallelModel,
  type PlotPoint,
  runHint,
  type ScatterModel,
} from "./sweep-model.js";

// The sweep page's charts (ECharts): the scatter of two metrics with its Pareto front, and the
// parallel coordinates of axes and metrics. A click on a point or a line calls `onPick` with its row.

use([
  ScatterChart,
  LineChart,
  ParallelChart,
  GridComponent,
  TooltipComponent,
  LegendComponent,
  ParallelComponent,
  CanvasRenderer,
]);

type ScatterOption = ComposeOption<
  | ScatterSeriesOption
  | LineSeriesOption
  | GridComponentOption
  | TooltipComponentOption
  | LegendComponentOption
>;
// ParallelComponentOption is left out: composed, echarts 6 types every key of the option as a
// parallel axis (animation: false does not typecheck). The two parallel keys are typed here.
type ParallelOption = ComposeOption<ParallelSeriesOption | TooltipComponentOption | LegendComponentOption> & {
  readonly parallel: Record<string, number>;
  readonly parallelAxis: readonly Record<string, unknown>[];
};

/** Points on the Pareto front, and lines of front points. */
export const FRONT_COLOUR = "#e15759";
/** The other points. */
export const OTHER_COLOUR = "#4e79a7";

/** The series of the scatter, in order: the front's line, the front's points, the other points. */
export const SCATTER_SERIES = { frontLine: 0, front: 1, others: 2 } as const;

/**
 * What the tooltip of a point says: its number, axis values, metrics, and whether its run opens
 * (a run opens when the cache holds its results; without --cache, none does).
 */
export function pointTooltip(
  row: SweepWebRow,
  data: Pick<SweepData, "axes" | "metrics" | "cacheDir">,
): string {
  const lines = [
    `<b>point ${row.point}</b> (${escapeHtml(row.status)})`,
    ...data.axes.map((name) => `${escapeHtml(name)}: ${escapeHtml(cellText(row.values[name]))}`),
    ...data.metrics.map(
      (name) => `${escapeHtml(metricName(name).text)}: ${escapeHtml(cellText(row.metrics[name]))}`,
    ),
    `<i>${escapeHtml(runHint(row, data.cacheDir))}</i>`,
  ];
  return lines.join("<br>");
}

function chartOf(element: HTMLElement): EChartsType {
  return getInstanceByDom(element) ?? init(element, undefined, { renderer: "canvas" });
}

/**
 * Draws the scatter of `model` (x against y) into `element`, the front's points red and joined by
 * a line in x order, the others blue; `logX` / `logY` draw that axis on a log scale (every value
 * must be > 0: see `logScaleOf`). With `colour`, every point takes its axis value's colour and the
 * front's points keep a red ring. Returns the chart.
 */
export function renderScatter(
  element: HTMLElement,
  model: ScatterModel,
  axes: {
    readonly x: string;
    readonly y: string;
    readonly logX?: boolean;
    readonly logY?: boolean;
    readonly colour?: AxisColours | null;
  },
  data: Pick<SweepData, "axes" | "metrics" | "cacheDir">,
  onPick: (row: SweepWebRow) => void,
): EChartsType {
  const chart = chartOf(element);
  const scaleOf = (log: boolean | undefined) =>
    log === true ? { type: "log" as const, logBase: 10 } : { type: "value" as const, scale: true };
  const colour = axes.colour ?? null;
  const item = (point: PlotPoint, onFront: boolean) => ({
    value: [point.x, point.y],
    row: point.row,
    ...(colour === null
      ? {}
      : {
          itemStyle: {
            color: colour.colourOf(point.row),
            ...(onFront ? { borderColor: FRONT_COLOUR, borderWidth: 3 } : {}),
          },
        }),
  });
  const option: ScatterOption = {
    animation: false,
    grid: { left: 80, right: 30, top: 40, bottom: 50 },
    legend: { top: 0 },
    tooltip: rowTooltip(data),
    xAxis: { ...scaleOf(axes.logX), name: metricName(axes.x).text, nameLocation: "middle", nameGap: 28 },
    yAxis: { ...scaleOf(axes.logY), name: metricName(axes.y).text, nameLocation: "end" },
    series: [
      {
        type: "line",
        name: "Pareto front",
        data: model.front.map((point) => [point.x, point.y]),
        symbol: "none",
        silent: true,
        lineStyle: { color: FRONT_COLOUR, width: 1.5, type: "dashed" },
        itemStyle: { color: FRONT_COLOUR },
        z: 1,
      },
      {
        type: "scatter",
        name: "on the front",
        data: model.front.map((point) => item(point, true)),
        symbolSize: 12,
        itemStyle: { color: FRONT_COLOUR },
        cursor: "pointer",
        z: 3,
      },
      {
        type: "scatter",
        name: "other points",
        data: model.others.map((point) => item(point, false)),
        symbolSize: 9,
        itemStyle: { color: OTHER_COLOUR, opacity: 0.8 },
        cursor: "pointer",
        z: 2,
      },
    ],
  };
  return drawn(chart, option, onPick);
}

/**
 * Draws the parallel coordinates of `model` into `element`: a category axis per dimension that
 * has text or lists, a value axis per numeric one (log when its values span three decades:
 * `logScaleOf`); lines of rows in `front` red, the others blue.
 */
export function renderParallel(
  element: HTMLElement,
  model: ParallelModel,
  front: ReadonlySet<number>,
  data: Pick<SweepData, "axes" | "metrics" | "cacheDir">,
  onPick: (row: SweepWebRow) => void,
): EChartsType {
  const chart = chartOf(element);
  const lines = (onFront: boolean) =>
    model.rows.flatMap((row, index) =>
      front.has(row.point) === onFront
        ? [{ value: (model.values[index] ?? []).map((value) => value ?? "-"), row }]
        : [],
    );
  const option: ParallelOption = {
    animation: false,
    legend: { top: 0 },
    tooltip: rowTooltip(data),
    parallel: { left: 60, right: 80, top: 50, bottom: 30 },
    parallelAxis: model.dimensions.map((dimension, dim) => {
      const name = dimension.source === "metric" ? metricName(dimension.name).text : dimension.name;
      return dimension.categories === null
        ? logScaleOf(numbersOf(model, dim)).suggested
          ? { dim, name: `${name}, log`, type: "log" as const, logBase: 10 }
          : { dim, name, type: "value" as const, scale: true }
        : { dim, name, type: "category" as const, data: [...dimension.categories] };
    }),
    series: [
      {
        type: "parallel",
        name: "other points",
        data: lines(false),
        lineStyle: { color: OTHER_COLOUR, width: 1.5, opacity: 0.6 },
      },
      {
        type: "parallel",
        name: "on the front",
        data: lines(true),
        lineStyle: { color: FRONT_COLOUR, width: 2.5, opacity: 0.9 },
      },
    ],
  };
  return drawn(chart, option, onPick);
}

/** The finite numbers of dimension `dim` over the model's rows. */
function numbersOf(model: ParallelModel, dim: number): number[] {
  return model.values.flatMap((values) => {
    const value = values?.[dim];
    return typeof value === "number" && Number.isFinite(value) ? [value] : [];
  });
}

/** The tooltip of a chart whose items carry their row: {@link pointTooltip}. */
function rowTooltip(data: Pick<SweepData, "axes" | "metrics" | "cacheDir">): TooltipComponentOption {
  return {
    trigger: "item",
    formatter: (params) => {
      const row = (params as { data?: { row?: SweepWebRow } }).data?.row;
      return row === undefined ? "" : pointTooltip(row, data);
    },
  };
}

/** Sets `option` on `chart` (replacing what it drew) and calls `onPick` with a clicked item's row. */
function drawn(
  chart: EChartsType,
  option: ScatterOption | ParallelOption,
  onPick: (row: SweepWebRow) => void,
): EChartsType {
  chart.setOption(option, { notMerge: true });
  chart.off("click");
  chart.on("click", (params) => {
    const row = (params.data as { row?: SweepWebRow } | undefined)?.row;
    if (row !== undefined) onPick(row);
  });
  return chart;
}
