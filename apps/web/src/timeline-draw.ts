/// <reference lib="dom" />
import type { WebTimelineWindow } from "./api.js";
import { formatNs } from "./format.js";
import { groupBusy, type TimelineRow } from "./timeline-groups-model.js";
import { type LaunchMark, placeLabels } from "./timeline-marks-model.js";
import { type TimeRange, ticks } from "./timeline-model.js";

// Drawing the timeline's canvases (timeline.ts keeps the state and the events): the time axis, the
// strip of launch labels, and the rows (group headers with their mean busy bar, tracks with their
// busy bars and slices, dashed launch markers across).

export const ROW_PX = 14;
export const LABEL_PX = 220;
export const AXIS_PX = 26;
export const MARKS_PX = 16;
export const RIGHT_PX = 12;
/** Indent of a track's name under its group's header. */
const INDENT_PX = 12;
const TEXT = "#1d2733";
const MUTED = "#5b6877";
const GROUP_BACKGROUND = "#e8edf3";
const GROUP_BAR = "#7b8a99";

/** What a drawing needs: the geometry of the plot and what is shown. */
export interface TimelineScene {
  readonly width: number;
  readonly view: TimeRange;
  readonly plotWidth: number;
  readonly names: readonly string[];
  readonly colours: readonly string[];
  readonly rows: readonly TimelineRow[];
  readonly grouped: boolean;
  readonly marks: readonly LaunchMark[];
  /** The window drawn last, its busy bytes and its slices by track (indices into `slices` / 4). */
  readonly shown: WebTimelineWindow | null;
  readonly busy: Uint8Array;
  readonly byTrack: readonly (readonly number[])[];
}

/** The x of `ns` in `range` (default: the view). */
export function xOf(scene: TimelineScene, ns: number, range: TimeRange = scene.view): number {
  return LABEL_PX + ((ns - range.fromNs) / (range.toNs - range.fromNs)) * scene.plotWidth;
}

export function drawAxis(context: CanvasRenderingContext2D | null, scene: TimelineScene): void {
  if (context === null) return;
  context.clearRect(0, 0, scene.width, AXIS_PX);
  context.fillStyle = MUTED;
  context.font = "11px system-ui, sans-serif";
  context.textBaseline = "top";
  for (const t of ticks(scene.view, Math.max(2, Math.floor(scene.plotWidth / 120)))) {
    const x = xOf(scene, t);
    context.fillRect(x, AXIS_PX - 6, 1, 6);
    context.fillText(formatNs(t), x + 2, 4);
  }
  context.fillText(`window ${formatNs(scene.view.toNs - scene.view.fromNs)}`, 4, 4);
}

/** The strip under the axis: each launch marker's tick, and its label where there is room. */
export function drawMarks(context: CanvasRenderingContext2D | null, scene: TimelineScene): number {
  if (context === null) return 0;
  context.clearRect(0, 0, scene.width, MARKS_PX);
  context.font = "11px system-ui, sans-serif";
  context.textBaseline = "middle";
  context.fillStyle = MUTED;
  context.fillText("launches", 4, MARKS_PX / 2);
  const visible = scene.marks.filter((mark) => mark.tNs >= scene.view.fromNs && mark.tNs <= scene.view.toNs);
  context.fillStyle = "#333";
  for (const mark of visible) context.fillRect(Math.round(xOf(scene, mark.tNs)), 0, 1, MARKS_PX);
  const placed = placeLabels(
    visible,
    (tNs) => xOf(scene, tNs),
    LABEL_PX,
    scene.width - RIGHT_PX,
    (text) => context.measureText(text).width,
  );
  for (const label of placed) {
    context.fillStyle = label.mark.at === "start" ? TEXT : MUTED;
    context.fillText(label.mark.label, label.x, MARKS_PX / 2);
  }
  return placed.length;
}

export function drawRows(context: CanvasRenderingContext2D | null, scene: TimelineScene): void {
  if (context === null) return;
  const { rows, shown, width } = scene;
  context.clearRect(0, 0, width, rows.length * ROW_PX);
  context.textBaseline = "middle";
  rows.forEach((row, index) => {
    const y = index * ROW_PX;
    if (row.kind === "group") {
      context.fillStyle = GROUP_BACKGROUND;
      context.fillRect(0, y, width, ROW_PX);
      context.font = "bold 10px system-ui, sans-serif";
      context.fillStyle = TEXT;
      const label = `${row.collapsed ? "▸" : "▾"} ${row.key} (${row.tracks.length} track${row.tracks.length === 1 ? "" : "s"})`;
      context.fillText(fitText(context, label, LABEL_PX - 8), 4, y + ROW_PX / 2);
      return;
    }
    if (index % 2 === 1) {
      context.fillStyle = "#f6f8fa";
      context.fillRect(0, y, width, ROW_PX);
    }
    context.font = "10px system-ui, sans-serif";
    context.fillStyle = TEXT;
    const indent = scene.grouped ? INDENT_PX : 0;
    context.fillText(
      fitText(context, scene.names[row.track] ?? "", LABEL_PX - 8 - indent),
      4 + indent,
      y + ROW_PX / 2,
    );
  });
  if (shown === null) return;
  const range = { fromNs: shown.fromNs, toNs: shown.toNs };
  const columnPx = scene.plotWidth / shown.width;
  const slices = shown.slices;
  const bars = (values: ArrayLike<number>, y: number) => {
    for (let column = 0; column < values.length; column++) {
      const value = values[column] as number;
      if (value === 0) continue;
      const height = Math.max(1, (value / 255) * (ROW_PX - 2));
      context.fillRect(LABEL_PX + column * columnPx, y + ROW_PX - 1 - height, Math.max(1, columnPx), height);
    }
  };
  rows.forEach((row, index) => {
    const y = index * ROW_PX;
    if (row.kind === "group") {
      context.fillStyle = GROUP_BAR;
      context.globalAlpha = 0.6;
      bars(groupBusy(scene.busy, shown.width, row.tracks), y);
      context.globalAlpha = 1;
      return;
    }
    context.fillStyle = scene.colours[row.track] ?? "#888";
    context.globalAlpha = slices === null ? 1 : 0.3;
    bars(scene.busy.subarray(row.track * shown.width, (row.track + 1) * shown.width), y);
    context.globalAlpha = 1;
    if (slices === null) return;
    for (const at of scene.byTrack[row.track] ?? []) {
      const x0 = Math.max(LABEL_PX, xOf(scene, slices[at * 4 + 1] as number, range));
      const x1 = Math.min(width - RIGHT_PX, xOf(scene, slices[at * 4 + 2] as number, range));
      context.fillRect(x0, y + 2, Math.max(1, x1 - x0), ROW_PX - 4);
    }
  });
  context.strokeStyle = "#333";
  context.setLineDash([4, 3]);
  for (const mark of scene.marks) {
    if (mark.tNs < range.fromNs || mark.tNs > range.toNs) continue;
    const x = Math.round(xOf(scene, mark.tNs, range)) + 0.5;
    context.beginPath();
    context.moveTo(x, 0);
    context.lineTo(x, rows.length * ROW_PX);
    context.stroke();
  }
  context.setLineDash([]);
}

/** `text` cut with an ellipsis to fit `width` px. */
function fitText(context: CanvasRenderingContext2D, text: string, width: number): string {
  if (context.measureText(text).width <= width) return text;
  let cut = text.length;
  while (cut > 1 && context.measureText(`…${text.slice(text.length - cut)}`).width > width) cut--;
  return `…${text.slice(text.length - cut)}`;
}
