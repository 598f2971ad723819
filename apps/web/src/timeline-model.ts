import type { WebTimelineWindow } from "./api.js";

// The timeline's arithmetic, apart from drawing: decoding a window's busy rows, zooming and
// panning the time window, ticks of the time axis.

/** A window of the run, ns. */
export interface TimeRange {
  readonly fromNs: number;
  readonly toNs: number;
}

/** The busy fractions of a window (`tracks x width`, track-major) as 0..1 per cell. */
export function decodeBusy(window: Pick<WebTimelineWindow, "busy">): Uint8Array {
  const text = atob(window.busy);
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  return bytes;
}

/** The shortest window the timeline zooms to, ns. */
export const MIN_WINDOW_NS = 1;

/**
 * `range` zoomed by `factor` (< 1 zooms in) around `atNs`, kept inside `[0, endNs]` and at least
 * {@link MIN_WINDOW_NS} wide.
 */
export function zoom(range: TimeRange, factor: number, atNs: number, endNs: number): TimeRange {
  const span = Math.min(endNs, Math.max(MIN_WINDOW_NS, (range.toNs - range.fromNs) * factor));
  const anchor = Math.min(Math.max(atNs, range.fromNs), range.toNs);
  const share = range.toNs > range.fromNs ? (anchor - range.fromNs) / (range.toNs - range.fromNs) : 0.5;
  return clampRange(anchor - share * span, span, endNs);
}

/** `range` moved by `deltaNs`, kept inside `[0, endNs]`. */
export function pan(range: TimeRange, deltaNs: number, endNs: number): TimeRange {
  return clampRange(range.fromNs + deltaNs, range.toNs - range.fromNs, endNs);
}

function clampRange(fromNs: number, span: number, endNs: number): TimeRange {
  const from = Math.min(Math.max(0, fromNs), Math.max(0, endNs - span));
  return { fromNs: from, toNs: from + span };
}

/** Tick times for an axis over `range` with about `count` ticks: multiples of 1, 2 or 5 x 10^k ns. */
export function ticks(range: TimeRange, count: number): number[] {
  const span = range.toNs - range.fromNs;
  if (!(span > 0) || count < 1) return [];
  const raw = span / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * power).find((candidate) => candidate >= raw) ?? 10 * power;
  const out: number[] = [];
  for (let t = Math.ceil(range.fromNs / step) * step; t <= range.toNs; t += step) {
    out.push(Math.round(t * 1e6) / 1e6);
  }
  return out;
}
