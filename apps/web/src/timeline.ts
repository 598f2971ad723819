/// <reference lib="dom" />
import type { WebTimeline, WebTimelineFilter, WebTimelineWindow } from "./api.js";
import { formatNs, formatPercent } from "./format.js";
import {
  AXIS_PX,
  drawAxis,
  drawMarks,
  drawRows,
  LABEL_PX,
  MARKS_PX,
  RIGHT_PX,
  ROW_PX,
  type TimelineScene,
  xOf,
} from "./timeline-draw.js";
import { normalFilter } from "./timeline-filter-model.js";
import {
  type GroupBy,
  groupBusy,
  type TimelineRow,
  timelineRows,
  trackBusy,
  windowShare,
} from "./timeline-groups-model.js";
import { trackColours } from "./timeline-legend-model.js";
import { launchMarks, markAt } from "./timeline-marks-model.js";
import { decodeBusy, pan, type TimeRange, zoom } from "./timeline-model.js";

// The timeline of a trace on a canvas: tracks (components) grouped by cube, SIP or kind under a
// header row each (click its name to collapse it: the header's bar is its tracks' mean), each
// track's busy fraction per pixel column (from the server's busy bins over the whole run), and
// the slices themselves when the window holds few enough (GET /api/timeline says how many). A
// filter (a kernel line, a search) keeps only the slices it matches and the tracks holding one.
// Launch markers are dashed lines, labelled in the strip under the axis where there is room.
// Wheel zooms time, drag pans, double-click shows the whole run; shift+wheel (or the wheel over
// the track names) scrolls the rows.

/** Rows visible before the rows scroll. */
const VISIBLE_ROWS = 40;

/**
 * Where the timeline's windows come from: kb web asks its server (`GET /api/timeline`), the
 * playground answers from the run's trace in memory.
 */
export interface TimelineSource {
  /** The window `[fromNs, toNs)` of timeline number `trace` in `width` columns (see {@link WebTimelineWindow}), of the slices `filter` keeps. */
  window(
    trace: number,
    fromNs: number,
    toNs: number,
    width: number,
    filter?: WebTimelineFilter | null,
  ): Promise<WebTimelineWindow>;
  /** Trace file number `trace` as written (for "Open in Perfetto"; without it, no such button). */
  trace?(trace: number): Promise<ArrayBuffer>;
}

/** A drawn timeline: its window, the server's last answer, and how to move it. */
export interface TimelineHandle {
  readonly timeline: WebTimeline;
  /** The window shown (or being fetched). */
  readonly view: TimeRange;
  /** The server's answer drawn last. */
  readonly window: WebTimelineWindow | null;
  /** The filter asked for (null: every slice). */
  readonly filter: WebTimelineFilter | null;
  /** The rows drawn: group headers and tracks. */
  readonly rows: readonly TimelineRow[];
  /** Shows `[fromNs, toNs)` and resolves with the server's answer once drawn. */
  setView(fromNs: number, toNs: number): Promise<WebTimelineWindow>;
  /** Shows only the slices `filter` keeps (null: all), resolving once drawn. */
  setFilter(filter: WebTimelineFilter | null): Promise<WebTimelineWindow>;
  /** Groups the tracks by cube, SIP, kind, or not. */
  setGroupBy(by: GroupBy): void;
  /** Collapses or expands group `key`. */
  toggleGroup(key: string): void;
  /** What hovering at (`x`, `y`) of the rows says (null: nothing). */
  hoverText(x: number, y: number): string | null;
  /** Redraws at the container's width. */
  resize(): void;
  /** Stops listening (another trace is shown). */
  dispose(): void;
}

/**
 * Draws timeline number `traceIndex` of the page's data into `container`, its windows asked of
 * `source`, tracks grouped `groupBy`. `onWindow` hears each answer drawn (for the note beside the chart).
 */
export function renderTimeline(
  container: HTMLElement,
  timeline: WebTimeline,
  traceIndex: number,
  source: TimelineSource,
  onWindow: (window: WebTimelineWindow) => void,
  groupBy: GroupBy = "cube",
): TimelineHandle {
  container.replaceChildren();
  container.classList.add("timeline-canvas");
  const axis = document.createElement("canvas");
  const strip = document.createElement("canvas");
  strip.className = "timeline-marks";
  const scroller = document.createElement("div");
  scroller.className = "timeline-rows";
  const rowsCanvas = document.createElement("canvas");
  const tip = document.createElement("div");
  tip.className = "timeline-tip";
  tip.hidden = true;
  scroller.append(rowsCanvas);
  container.append(axis, strip, scroller, tip);
  const colours = trackColours(timeline.tracks);
  const names = timeline.tracks.map((track) => track.name);
  const marks = launchMarks(timeline.markers);
  const endNs = Math.max(timeline.endNs, 1);

  let view: TimeRange = { fromNs: 0, toNs: endNs };
  let filter: WebTimelineFilter | null = null;
  let by = groupBy;
  const collapsed = new Set<string>();
  let rows: TimelineRow[] = [];
  let shown: WebTimelineWindow | null = null;
  let busy: Uint8Array = new Uint8Array(0);
  /** Slices of the shown window per track: indices into `shown.slices` / 4. */
  let byTrack: number[][] = [];
  let requestId = 0;
  let pending: ReturnType<typeof setTimeout> | null = null;
  let waiting: ((window: WebTimelineWindow) => void)[] = [];

  const plotWidth = () => Math.max(50, container.clientWidth - LABEL_PX - RIGHT_PX);
  const scene = (): TimelineScene => ({
    width: container.clientWidth,
    view,
    plotWidth: plotWidth(),
    names,
    colours,
    rows,
    grouped: by !== "none",
    marks,
    shown,
    busy,
    byTrack,
  });
  const nsOf = (x: number) => view.fromNs + ((x - LABEL_PX) / plotWidth()) * (view.toNs - view.fromNs);

  const layout = () => {
    const keep = shown?.filtered === undefined ? null : new Set(shown.filtered.tracks);
    rows = timelineRows(timeline.tracks, by, collapsed, keep);
    scroller.style.maxHeight = `${Math.min(rows.length, VISIBLE_ROWS) * ROW_PX + 2}px`;
    container.dataset.rowCount = String(rows.length);
    container.dataset.trackRows = String(rows.filter((row) => row.kind === "track").length);
    container.dataset.groupCount = String(rows.filter((row) => row.kind === "group").length);
  };

  const draw = () => {
    const width = container.clientWidth;
    axis.width = width;
    axis.height = AXIS_PX;
    strip.width = width;
    strip.height = MARKS_PX;
    rowsCanvas.width = width;
    rowsCanvas.height = Math.max(1, rows.length * ROW_PX);
    const drawn = scene();
    drawAxis(axis.getContext("2d"), drawn);
    container.dataset.markLabels = String(drawMarks(strip.getContext("2d"), drawn));
    drawRows(rowsCanvas.getContext("2d"), drawn);
  };

  const fetchWindow = async () => {
    const id = ++requestId;
    const asked = view;
    const answer = await source.window(traceIndex, asked.fromNs, asked.toNs, Math.round(plotWidth()), filter);
    if (id !== requestId) return;
    shown = answer;
    busy = decodeBusy(answer);
    byTrack = Array.from({ length: timeline.tracks.length }, () => []);
    const slices = answer.slices ?? [];
    for (let i = 0; i * 4 < slices.length; i++) byTrack[slices[i * 4] as number]?.push(i);
    container.dataset.mode = answer.slices === null ? "busy" : "slices";
    container.dataset.fromNs = String(answer.fromNs);
    container.dataset.toNs = String(answer.toNs);
    container.dataset.sliceCount = String(answer.sliceCount);
    container.dataset.filteredSlices = answer.filtered === undefined ? "" : String(answer.filtered.slices);
    layout();
    draw();
    onWindow(answer);
    const resolved = waiting;
    waiting = [];
    for (const resolve of resolved) resolve(answer);
  };

  const refresh = () => {
    if (pending !== null) clearTimeout(pending);
    draw();
    pending = setTimeout(() => {
      pending = null;
      fetchWindow().catch((error: unknown) => {
        container.dataset.error = error instanceof Error ? error.message : String(error);
      });
    }, 60);
  };
  const answered = () => {
    const promise = new Promise<WebTimelineWindow>((resolve) => waiting.push(resolve));
    refresh();
    return promise;
  };

  rowsCanvas.addEventListener(
    "wheel",
    (event) => {
      event.preventDefault();
      if (event.shiftKey || event.offsetX < LABEL_PX) {
        // Browsers turn shift+wheel into a sideways delta: scroll the rows with whichever is set.
        scroller.scrollTop += event.deltaY !== 0 ? event.deltaY : event.deltaX;
        return;
      }
      view = zoom(view, event.deltaY > 0 ? 1.25 : 0.8, nsOf(event.offsetX), endNs);
      refresh();
    },
    { passive: false },
  );
  let dragFrom: number | null = null;
  rowsCanvas.addEventListener("mousedown", (event) => {
    dragFrom = event.offsetX >= LABEL_PX ? event.clientX : null;
  });
  const onMouseUp = () => {
    dragFrom = null;
  };
  const onMouseMove = (event: MouseEvent) => {
    if (dragFrom === null) return;
    const deltaNs = ((dragFrom - event.clientX) / plotWidth()) * (view.toNs - view.fromNs);
    dragFrom = event.clientX;
    view = pan(view, deltaNs, endNs);
    refresh();
  };
  window.addEventListener("mouseup", onMouseUp);
  window.addEventListener("mousemove", onMouseMove);
  rowsCanvas.addEventListener("dblclick", () => {
    view = { fromNs: 0, toNs: endNs };
    refresh();
  });
  rowsCanvas.addEventListener("click", (event) => {
    const row = rows[Math.floor(event.offsetY / ROW_PX)];
    if (row?.kind === "group" && event.offsetX < LABEL_PX) handle.toggleGroup(row.key);
  });
  const showTip = (text: string | null, x: number, y: number) => {
    tip.hidden = text === null;
    if (text === null) return;
    tip.textContent = text;
    tip.style.left = `${Math.min(x + 14, container.clientWidth - 260)}px`;
    tip.style.top = `${y + 14}px`;
  };
  rowsCanvas.addEventListener("mousemove", (event) => {
    showTip(
      hoverText(event.offsetX, event.offsetY),
      event.offsetX,
      AXIS_PX + MARKS_PX + event.offsetY - scroller.scrollTop,
    );
  });
  strip.addEventListener("mousemove", (event) => {
    const mark = markAt(marks, event.offsetX, (tNs) => xOf(scene(), tNs));
    showTip(mark?.text ?? null, event.offsetX, AXIS_PX + event.offsetY);
  });
  for (const element of [rowsCanvas, strip]) {
    element.addEventListener("mouseleave", () => {
      tip.hidden = true;
    });
  }

  /** What is under the pointer: a launch marker, a slice, the row's busy fraction, or its share of the window. */
  const hoverText = (x: number, y: number): string | null => {
    const row = rows[Math.floor(y / ROW_PX)];
    if (row === undefined) return null;
    if (x < LABEL_PX) {
      return row.kind === "group" ? `${row.key}: click to ${row.collapsed ? "expand" : "collapse"}` : null;
    }
    const mark = markAt(marks, x, (tNs) => xOf(scene(), tNs));
    if (mark !== null) return mark.text;
    if (shown === null) return null;
    const width = shown.width;
    const column = Math.floor(((x - LABEL_PX) / plotWidth()) * width);
    if (column < 0 || column >= width) return null;
    const columnNs = (shown.toNs - shown.fromNs) / width;
    const at = shown.fromNs + column * columnNs;
    const where = `${formatNs(at)} … ${formatNs(at + columnNs)}`;
    const windowText = `the shown window ${formatNs(shown.fromNs)} … ${formatNs(shown.toNs)}`;
    if (row.kind === "group") {
      const values = groupBusy(busy, width, row.tracks);
      return `${row.key}: ${row.tracks.length} tracks\n${where}: ${formatPercent((values[column] ?? 0) / 255)} busy (their mean)\n${formatPercent(windowShare(values))} busy over ${windowText}`;
    }
    const track = timeline.tracks[row.track];
    if (track === undefined) return null;
    const slices = shown.slices;
    const range = { fromNs: shown.fromNs, toNs: shown.toNs };
    if (slices !== null) {
      for (const index of byTrack[row.track] ?? []) {
        const x0 = xOf(scene(), slices[index * 4 + 1] as number, range);
        const x1 = Math.max(x0 + 1, xOf(scene(), slices[index * 4 + 2] as number, range));
        if (x >= x0 - 1 && x <= x1 + 1) {
          const start = slices[index * 4 + 1] as number;
          const end = slices[index * 4 + 2] as number;
          return `${shown.names[slices[index * 4 + 3] as number] ?? ""}\n${track.name}\n${formatNs(start)} → ${formatNs(end)} (${formatNs(end - start)})`;
        }
      }
    }
    const row255 = trackBusy(busy, width, row.track);
    const value = row255[column] ?? 0;
    const share = `${formatPercent(windowShare(row255))} busy over ${windowText}`;
    // An idle column says so, and what the track did over the window: never a bare "0% busy".
    if (value === 0) return `${track.name}\nidle ${where}\n${share}`;
    return `${track.name}\n${where}: ${formatPercent(value / 255)} busy\n${share}`;
  };

  const handle: TimelineHandle = {
    timeline,
    get view() {
      return view;
    },
    get window() {
      return shown;
    },
    get filter() {
      return filter;
    },
    get rows() {
      return rows;
    },
    setView(fromNs: number, toNs: number) {
      view = { fromNs: Math.max(0, fromNs), toNs: Math.min(endNs, Math.max(toNs, fromNs + 1)) };
      return answered();
    },
    setFilter(next: WebTimelineFilter | null) {
      filter = normalFilter(next);
      container.dataset.filter = filter === null ? "" : JSON.stringify(filter);
      return answered();
    },
    setGroupBy(next: GroupBy) {
      by = next;
      collapsed.clear();
      tip.hidden = true;
      layout();
      draw();
    },
    toggleGroup(key: string) {
      if (!collapsed.delete(key)) collapsed.add(key);
      tip.hidden = true;
      layout();
      draw();
    },
    hoverText,
    resize: refresh,
    dispose() {
      window.removeEventListener("mouseup", onMouseUp);
      window.removeEventListener("mousemove", onMouseMove);
      if (pending !== null) clearTimeout(pending);
      requestId++;
    },
  };
  container.dataset.trackCount = String(timeline.tracks.length);
  container.dataset.filter = "";
  layout();
  refresh();
  return handle;
}
