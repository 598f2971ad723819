/// <reference lib="dom" />
import type { WebTimeline, WebTimelineWindow } from "./api.js";
import { kindColour, trackKind } from "./colour.js";
import { formatNs } from "./format.js";
import { decodeBusy, pan, type TimeRange, ticks, zoom } from "./timeline-model.js";

// The timeline of a trace on a canvas: one row per track (component). At any zoom each row shows
// how busy the track was in each pixel column (bar height: the busy fraction, from the server's
// busy bins over the whole run); when the window holds few enough slices (GET /api/timeline says
// how many), the slices themselves are drawn over it. Wheel zooms time, drag pans, double-click
// shows the whole run; shift+wheel (or the wheel over the track names) scrolls the rows.

const ROW_PX = 14;
const LABEL_PX = 220;
const AXIS_PX = 26;
const RIGHT_PX = 12;
/** Rows visible before the rows scroll. */
const VISIBLE_ROWS = 40;

/**
 * Where the timeline's windows come from: kb web asks its server (`GET /api/timeline`), the
 * playground answers from the run's trace in memory.
 */
export interface TimelineSource {
  /** The window `[fromNs, toNs)` of timeline number `trace` in `width` columns (see {@link WebTimelineWindow}). */
  window(trace: number, fromNs: number, toNs: number, width: number): Promise<WebTimelineWindow>;
}

/** A drawn timeline: its window, the server's last answer, and how to move it. */
export interface TimelineHandle {
  readonly timeline: WebTimeline;
  /** The window shown (or being fetched). */
  readonly view: TimeRange;
  /** The server's answer drawn last. */
  readonly window: WebTimelineWindow | null;
  /** Shows `[fromNs, toNs)` and resolves with the server's answer once drawn. */
  setView(fromNs: number, toNs: number): Promise<WebTimelineWindow>;
  /** Redraws at the container's width. */
  resize(): void;
  /** Stops listening (another trace is shown). */
  dispose(): void;
}

/**
 * Draws timeline number `traceIndex` of the page's data into `container`, its windows asked of
 * `source`. `onWindow` hears each answer drawn (for the note beside the chart).
 */
export function renderTimeline(
  container: HTMLElement,
  timeline: WebTimeline,
  traceIndex: number,
  source: TimelineSource,
  onWindow: (window: WebTimelineWindow) => void,
): TimelineHandle {
  container.replaceChildren();
  container.classList.add("timeline-canvas");
  const axis = document.createElement("canvas");
  const scroller = document.createElement("div");
  scroller.className = "timeline-rows";
  const rows = document.createElement("canvas");
  const tip = document.createElement("div");
  tip.className = "timeline-tip";
  tip.hidden = true;
  scroller.append(rows);
  container.append(axis, scroller, tip);
  const trackCount = timeline.tracks.length;
  scroller.style.maxHeight = `${Math.min(trackCount, VISIBLE_ROWS) * ROW_PX + 2}px`;
  const colours = timeline.tracks.map((track) => kindColour(trackKind(track.name)));
  const endNs = Math.max(timeline.endNs, 1);

  let view: TimeRange = { fromNs: 0, toNs: endNs };
  let shown: WebTimelineWindow | null = null;
  let busy: Uint8Array = new Uint8Array(0);
  /** Slices of the shown window per row: indices into `shown.slices` / 4. */
  let byRow: number[][] = [];
  let requestId = 0;
  let pending: ReturnType<typeof setTimeout> | null = null;
  let waiting: ((window: WebTimelineWindow) => void)[] = [];

  const plotWidth = () => Math.max(50, container.clientWidth - LABEL_PX - RIGHT_PX);
  const xOf = (ns: number, range: TimeRange = view) =>
    LABEL_PX + ((ns - range.fromNs) / (range.toNs - range.fromNs)) * plotWidth();
  const nsOf = (x: number) => view.fromNs + ((x - LABEL_PX) / plotWidth()) * (view.toNs - view.fromNs);

  const draw = () => {
    const width = container.clientWidth;
    axis.width = width;
    axis.height = AXIS_PX;
    rows.width = width;
    rows.height = trackCount * ROW_PX;
    drawAxis(axis.getContext("2d"), width);
    drawRows(rows.getContext("2d"), width);
  };

  const drawAxis = (context: CanvasRenderingContext2D | null, width: number) => {
    if (context === null) return;
    context.clearRect(0, 0, width, AXIS_PX);
    context.fillStyle = "#5b6877";
    context.font = "11px system-ui, sans-serif";
    context.textBaseline = "top";
    for (const t of ticks(view, Math.max(2, Math.floor(plotWidth() / 120)))) {
      const x = xOf(t);
      context.fillRect(x, AXIS_PX - 6, 1, 6);
      context.fillText(formatNs(t), x + 2, 4);
    }
    context.fillText(`window ${formatNs(view.toNs - view.fromNs)}`, 4, 4);
  };

  const drawRows = (context: CanvasRenderingContext2D | null, width: number) => {
    if (context === null) return;
    context.clearRect(0, 0, width, trackCount * ROW_PX);
    context.font = "10px system-ui, sans-serif";
    context.textBaseline = "middle";
    for (let row = 0; row < trackCount; row++) {
      const y = row * ROW_PX;
      if (row % 2 === 1) {
        context.fillStyle = "#f6f8fa";
        context.fillRect(0, y, width, ROW_PX);
      }
      context.fillStyle = "#1d2733";
      context.fillText(fitText(context, timeline.tracks[row]?.name ?? "", LABEL_PX - 8), 4, y + ROW_PX / 2);
    }
    if (shown === null) return;
    const range = { fromNs: shown.fromNs, toNs: shown.toNs };
    const columnPx = plotWidth() / shown.width;
    const slices = shown.slices;
    for (let row = 0; row < trackCount; row++) {
      const y = row * ROW_PX;
      context.fillStyle = colours[row] ?? "#888";
      context.globalAlpha = slices === null ? 1 : 0.3;
      for (let column = 0; column < shown.width; column++) {
        const value = busy[row * shown.width + column] as number;
        if (value === 0) continue;
        const height = Math.max(1, (value / 255) * (ROW_PX - 2));
        context.fillRect(
          LABEL_PX + column * columnPx,
          y + ROW_PX - 1 - height,
          Math.max(1, columnPx),
          height,
        );
      }
    }
    context.globalAlpha = 1;
    if (slices !== null) {
      for (let row = 0; row < trackCount; row++) {
        const y = row * ROW_PX;
        context.fillStyle = colours[row] ?? "#888";
        for (const index of byRow[row] ?? []) {
          const x0 = Math.max(LABEL_PX, xOf(slices[index * 4 + 1] as number, range));
          const x1 = Math.min(width - RIGHT_PX, xOf(slices[index * 4 + 2] as number, range));
          context.fillRect(x0, y + 2, Math.max(1, x1 - x0), ROW_PX - 4);
        }
      }
    }
    context.strokeStyle = "#333";
    context.setLineDash([4, 3]);
    for (const marker of timeline.markers) {
      if (marker.tNs < range.fromNs || marker.tNs > range.toNs) continue;
      const x = Math.round(xOf(marker.tNs, range)) + 0.5;
      context.beginPath();
      context.moveTo(x, 0);
      context.lineTo(x, trackCount * ROW_PX);
      context.stroke();
    }
    context.setLineDash([]);
  };

  const fetchWindow = async () => {
    const id = ++requestId;
    const asked = view;
    const answer = await source.window(traceIndex, asked.fromNs, asked.toNs, Math.round(plotWidth()));
    if (id !== requestId) return;
    shown = answer;
    busy = decodeBusy(answer);
    byRow = Array.from({ length: trackCount }, () => []);
    const slices = answer.slices ?? [];
    for (let i = 0; i * 4 < slices.length; i++) byRow[slices[i * 4] as number]?.push(i);
    container.dataset.mode = answer.slices === null ? "busy" : "slices";
    container.dataset.fromNs = String(answer.fromNs);
    container.dataset.toNs = String(answer.toNs);
    container.dataset.sliceCount = String(answer.sliceCount);
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

  rows.addEventListener(
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
  rows.addEventListener("mousedown", (event) => {
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
  rows.addEventListener("dblclick", () => {
    view = { fromNs: 0, toNs: endNs };
    refresh();
  });
  rows.addEventListener("mousemove", (event) => {
    const row = Math.floor(event.offsetY / ROW_PX);
    const text = hoverText(row, event.offsetX);
    tip.hidden = text === null;
    if (text === null) return;
    tip.textContent = text;
    tip.style.left = `${Math.min(event.offsetX + 14, container.clientWidth - 260)}px`;
    tip.style.top = `${AXIS_PX + event.offsetY - scroller.scrollTop + 14}px`;
  });
  rows.addEventListener("mouseleave", () => {
    tip.hidden = true;
  });

  /** What is under the pointer: a slice, else the row's busy fraction in that column. */
  const hoverText = (row: number, x: number): string | null => {
    const track = timeline.tracks[row];
    if (shown === null || track === undefined || x < LABEL_PX) return null;
    const range = { fromNs: shown.fromNs, toNs: shown.toNs };
    const slices = shown.slices;
    if (slices !== null) {
      for (const index of byRow[row] ?? []) {
        const x0 = xOf(slices[index * 4 + 1] as number, range);
        const x1 = Math.max(x0 + 1, xOf(slices[index * 4 + 2] as number, range));
        if (x >= x0 - 1 && x <= x1 + 1) {
          const start = slices[index * 4 + 1] as number;
          const end = slices[index * 4 + 2] as number;
          return `${shown.names[slices[index * 4 + 3] as number] ?? ""}\n${track.name}\n${formatNs(start)} → ${formatNs(end)} (${formatNs(end - start)})`;
        }
      }
    }
    const column = Math.floor(((x - LABEL_PX) / plotWidth()) * shown.width);
    const value = busy[row * shown.width + column];
    if (value === undefined) return null;
    const columnNs = (shown.toNs - shown.fromNs) / shown.width;
    const at = shown.fromNs + column * columnNs;
    return `${track.name}\n${formatNs(at)} … ${formatNs(at + columnNs)}: ${((value / 255) * 100).toFixed(0)}% busy`;
  };

  container.dataset.trackCount = String(trackCount);
  refresh();
  return {
    timeline,
    get view() {
      return view;
    },
    get window() {
      return shown;
    },
    setView(fromNs: number, toNs: number) {
      view = { fromNs: Math.max(0, fromNs), toNs: Math.min(endNs, Math.max(toNs, fromNs + 1)) };
      const answered = new Promise<WebTimelineWindow>((resolve) => waiting.push(resolve));
      refresh();
      return answered;
    },
    resize: refresh,
    dispose() {
      window.removeEventListener("mouseup", onMouseUp);
      window.removeEventListener("mousemove", onMouseMove);
      if (pending !== null) clearTimeout(pending);
      requestId++;
    },
  };
}

/** `text` cut with an ellipsis to fit `width` px. */
function fitText(context: CanvasRenderingContext2D, text: string, width: number): string {
  if (context.measureText(text).width <= width) return text;
  let cut = text.length;
  while (cut > 1 && context.measureText(`…${text.slice(text.length - cut)}`).width > width) cut--;
  return `…${text.slice(text.length - cut)}`;
}
