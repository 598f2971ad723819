import { formatNs } from "./format.js";

// The timeline's launch markers apart from drawing: which launch each `launch` / `launch_complete`
// instant of the trace belongs to, their labels where there is room, and the marker under the pointer.

/** A launch marker: where a launch starts or ends. */
export interface LaunchMark {
  readonly tNs: number;
  /** `start` (a `launch: NAME` instant), `end` (`launch_complete: NAME`), or `other`. */
  readonly at: "start" | "end" | "other";
  /** The kernel's name (the instant's name without its `launch: ` prefix). */
  readonly name: string;
  /** The launch's number, from 1 in start order (0 for `other`). */
  readonly launch: number;
  /** The label drawn beside it when there is room: `#1 attention`, `end #1`. */
  readonly label: string;
  /** What hovering it says. */
  readonly text: string;
}

/**
 * The markers of a trace (`WebTimeline.markers`, any order) as launches: starts numbered from 1 in
 * time order, each end tied to the earliest start of its name still open.
 */
export function launchMarks(
  markers: readonly { readonly tNs: number; readonly label: string }[],
): LaunchMark[] {
  const sorted = [...markers].sort((a, b) => a.tNs - b.tNs);
  const open = new Map<string, { launch: number; tNs: number }[]>();
  const ends = new Map<number, number>();
  const parsed = sorted.map((marker) => {
    const start = /^launch: (.*)$/.exec(marker.label);
    const end = /^launch_complete: (.*)$/.exec(marker.label);
    return { marker, start: start?.[1], end: end?.[1] };
  });
  let count = 0;
  const numbered = parsed.map(({ marker, start, end }) => {
    if (start !== undefined) {
      const launch = ++count;
      const list = open.get(start) ?? [];
      list.push({ launch, tNs: marker.tNs });
      open.set(start, list);
      return { marker, at: "start" as const, name: start, launch };
    }
    if (end !== undefined) {
      const launch = open.get(end)?.shift()?.launch ?? 0;
      if (launch > 0) ends.set(launch, marker.tNs);
      return { marker, at: launch > 0 ? ("end" as const) : ("other" as const), name: end, launch };
    }
    return { marker, at: "other" as const, name: marker.label, launch: 0 };
  });
  const startOf = new Map(numbered.filter((m) => m.at === "start").map((m) => [m.launch, m.marker.tNs]));
  return numbered.map(({ marker, at, name, launch }) => {
    const t = formatNs(marker.tNs);
    if (at === "start") {
      const endNs = ends.get(launch);
      const span =
        endNs === undefined ? "" : `, ends at ${formatNs(endNs)} (${formatNs(endNs - marker.tNs)})`;
      return {
        tNs: marker.tNs,
        at,
        name,
        launch,
        label: `#${launch} ${name}`,
        text: `launch #${launch} ${name}: starts at ${t}${span}`,
      };
    }
    if (at === "end") {
      const from = startOf.get(launch) as number;
      return {
        tNs: marker.tNs,
        at,
        name,
        launch,
        label: `end #${launch}`,
        text: `launch #${launch} ${name}: ends at ${t} (${formatNs(marker.tNs - from)} after its start)`,
      };
    }
    return { tNs: marker.tNs, at, name, launch, label: name, text: `${marker.label} at ${t}` };
  });
}

/** A label placed: its marker, and its left edge, px. */
export interface PlacedLabel {
  readonly mark: LaunchMark;
  readonly x: number;
}

/**
 * The labels drawn where there is room, left to right: a marker at `xOf(tNs)` gets its label just
 * right of it (or, when that does not fit, just left of it) when it stays within `leftPx` ..
 * `rightPx` and clears the labels placed by `gapPx`; starts are placed before ends (a start's label
 * is the one that names the launch). `width` measures text, px.
 */
export function placeLabels(
  marks: readonly LaunchMark[],
  xOf: (tNs: number) => number,
  leftPx: number,
  rightPx: number,
  width: (text: string) => number,
  gapPx = 6,
): PlacedLabel[] {
  const placed: { mark: LaunchMark; x: number; end: number }[] = [];
  const fits = (x: number, end: number) =>
    x >= leftPx &&
    end <= rightPx &&
    placed.every((other) => end + gapPx <= other.x || x >= other.end + gapPx);
  for (const pass of ["start", "end", "other"] as const) {
    for (const mark of marks) {
      if (mark.at !== pass) continue;
      const at = xOf(mark.tNs);
      const w = width(mark.label);
      const x = [at + 3, at - 3 - w].find((left) => fits(left, left + w));
      if (x !== undefined) placed.push({ mark, x, end: x + w });
    }
  }
  return placed.sort((a, b) => a.x - b.x).map(({ mark, x }) => ({ mark, x }));
}

/** The marker within `tolerancePx` of `x` (the nearest), or null. */
export function markAt(
  marks: readonly LaunchMark[],
  x: number,
  xOf: (tNs: number) => number,
  tolerancePx = 3,
): LaunchMark | null {
  let best: LaunchMark | null = null;
  let bestDistance = tolerancePx;
  for (const mark of marks) {
    const distance = Math.abs(xOf(mark.tNs) - x);
    if (distance <= bestDistance) {
      best = mark;
      bestDistance = distance;
    }
  }
  return best;
}
