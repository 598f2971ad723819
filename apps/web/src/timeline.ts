/// <reference lib="dom" />
import { CustomChart, type CustomSeriesOption } from "echarts/charts";
import {
  DataZoomComponent,
  type DataZoomComponentOption,
  GridComponent,
  type GridComponentOption,
  MarkLineComponent,
  type MarkLineComponentOption,
  TooltipComponent,
  type TooltipComponentOption,
} from "echarts/components";
import { type ComposeOption, type EChartsType, graphic, use } from "echarts/core";
import { CanvasRenderer } from "echarts/renderers";
import type { WebTimeline } from "./api.js";
import { existingOrNew } from "./charts.js";
import { kindColour, trackKind } from "./colour.js";
import { escapeHtml, formatNs } from "./format.js";

use([CustomChart, GridComponent, TooltipComponent, DataZoomComponent, MarkLineComponent, CanvasRenderer]);

type TimelineOption = ComposeOption<
  | CustomSeriesOption
  | GridComponentOption
  | TooltipComponentOption
  | DataZoomComponentOption
  | MarkLineComponentOption
>;

/** Rows shown at once; the vertical slider scrolls through the rest. */
const VISIBLE_ROWS = 36;
const ROW_PX = 18;
/** Launch markers drawn at most. */
const MAX_MARKERS = 64;

/**
 * Draws a timeline: one row per track (component), a bar per slice coloured by component kind,
 * launch markers as dashed lines. Zoom the time axis with the wheel or the slider below; scroll
 * the rows with the slider on the right. Rendered as an ECharts custom series on a canvas.
 */
export function renderTimeline(element: HTMLElement, timeline: WebTimeline): EChartsType {
  const rows = timeline.tracks.length;
  const visible = Math.max(1, Math.min(rows, VISIBLE_ROWS));
  element.style.height = `${visible * ROW_PX + 120}px`;
  const chart = existingOrNew(element);
  const colours = timeline.tracks.map((track) => kindColour(trackKind(track.name)));
  const data: number[][] = [];
  const slices = timeline.slices;
  for (let i = 0; i + 3 < slices.length; i += 4) {
    data.push([
      slices[i] as number,
      slices[i + 1] as number,
      slices[i + 2] as number,
      slices[i + 3] as number,
    ]);
  }

  const renderItem: CustomSeriesOption["renderItem"] = (params, api) => {
    const track = Number(api.value(0));
    const start = api.coord([api.value(1), track]) as number[];
    const end = api.coord([api.value(2), track]) as number[];
    const band = (api.size?.([0, 1]) as number[] | undefined)?.[1] ?? ROW_PX;
    const height = band * 0.7;
    const system = params.coordSys as unknown as { x: number; y: number; width: number; height: number };
    const shape = graphic.clipRectByRect(
      {
        x: start[0] as number,
        y: (start[1] as number) - height / 2,
        width: Math.max((end[0] as number) - (start[0] as number), 0.5),
        height,
      },
      { x: system.x, y: system.y, width: system.width, height: system.height },
    );
    if (shape === undefined) return null;
    return { type: "rect", transition: [], shape, style: { fill: colours[track] ?? "#888" } };
  };

  const option: TimelineOption = {
    animation: false,
    grid: { left: 210, right: 44, top: 16, bottom: 70 },
    tooltip: {
      trigger: "item",
      formatter: (params) => {
        const item = Array.isArray(params) ? params[0] : params;
        const value = (item?.value ?? []) as number[];
        const [track = 0, start = 0, end = 0, name = 0] = value;
        return [
          `<b>${escapeHtml(timeline.names[name] ?? "")}</b>`,
          escapeHtml(timeline.tracks[track]?.name ?? ""),
          `${escapeHtml(formatNs(start))} → ${escapeHtml(formatNs(end))} (${escapeHtml(formatNs(end - start))})`,
        ].join("<br>");
      },
    },
    xAxis: {
      type: "value",
      min: 0,
      max: timeline.endNs > 0 ? timeline.endNs : 1,
      name: "simulated time",
      nameLocation: "middle",
      nameGap: 24,
      axisLabel: { formatter: (value: number) => formatNs(value), showMaxLabel: false },
      splitLine: { lineStyle: { color: "#eef1f4" } },
    },
    yAxis: {
      type: "category",
      data: timeline.tracks.map((track) => track.name),
      inverse: true,
      axisTick: { show: false },
      axisLabel: { fontSize: 10, width: 200, overflow: "truncate" },
      splitLine: { show: false },
    },
    dataZoom: [
      {
        type: "slider",
        xAxisIndex: 0,
        filterMode: "weakFilter",
        bottom: 8,
        height: 18,
        labelFormatter: (value: number) => formatNs(value),
      },
      { type: "inside", xAxisIndex: 0, filterMode: "weakFilter" },
      {
        type: "slider",
        yAxisIndex: 0,
        filterMode: "weakFilter",
        right: 8,
        width: 16,
        startValue: 0,
        endValue: visible - 1,
        showDetail: false,
      },
      {
        type: "inside",
        yAxisIndex: 0,
        filterMode: "weakFilter",
        zoomOnMouseWheel: false,
        moveOnMouseWheel: true,
      },
    ],
    series: [
      {
        type: "custom",
        name: timeline.label,
        renderItem,
        encode: { x: [1, 2], y: 0 },
        dimensions: ["track", "start", "end", "name"],
        data,
        progressive: 20_000,
        markLine: {
          symbol: "none",
          silent: true,
          lineStyle: { color: "#333", type: "dashed", width: 1 },
          label: { formatter: "{b}", position: "insideEndTop", fontSize: 10 },
          data: timeline.markers
            .slice(0, MAX_MARKERS)
            .map((marker) => ({ xAxis: marker.tNs, name: marker.label })),
        },
      },
    ],
  };
  chart.setOption(option, true);
  return chart;
}
