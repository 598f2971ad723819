import type { LaunchRoofline, RunResults } from "@kb/runtime";
import { formatSi } from "./format.js";

// What the roofline chart draws, from the results' `launches[].roofline` (computed once, in
// @kb/runtime): line segments for the ceilings and slopes, the launch's points, and log axes that
// hold them. Pure, so it is tested without a browser; roofline-chart.ts draws it.

/** A launch of a results file that has roofline data. */
export interface RooflineLaunch {
  /** Its position among the file's launches, from 0. */
  readonly index: number;
  /** `#2 gemm` */
  readonly label: string;
  readonly roofline: LaunchRoofline;
}

/** The launches of `results` with a roofline (results written before it have none). */
export function rooflineLaunches(results: RunResults): RooflineLaunch[] {
  const launches: RooflineLaunch[] = [];
  results.launches.forEach((launch, index) => {
    if (launch.roofline !== undefined)
      launches.push({ index, label: `#${index + 1} ${launch.name}`, roofline: launch.roofline });
  });
  return launches;
}

/** A ceiling (horizontal) or slope (diagonal) as a segment on the chart. */
export interface RooflineLine {
  readonly kind: "ceiling" | "slope";
  /**
   * `PE_GEMM f16 2.05 TFLOP/s`, `HBM 409.6 GB/s`; prefixed by the entry's name when several are
   * drawn and only this one has it.
   */
  readonly name: string;
  /** Which entry it belongs to (its colour); null for a line every entry drawn has (A's and B's HBM). */
  readonly entry: number | null;
  readonly from: readonly [number, number];
  readonly to: readonly [number, number];
}

/** A point of a launch: x FLOP/byte, y FLOP/s. */
export interface RooflineMark {
  readonly entry: number;
  readonly traffic: LaunchRoofline["points"][number]["traffic"];
  /** `actual HBM traffic`, `minimal HBM traffic`, `busiest link`. */
  readonly name: string;
  readonly x: number;
  readonly y: number;
  readonly bytes: number;
}

/** Everything the chart draws, and its log axes' ranges (powers of ten). */
export interface RooflineView {
  readonly lines: readonly RooflineLine[];
  readonly marks: readonly RooflineMark[];
  readonly x: readonly [number, number];
  readonly y: readonly [number, number];
}

/** What each traffic's point is called. */
export const TRAFFIC_NAMES: Readonly<Record<RooflineMark["traffic"], string>> = {
  hbm: "actual HBM traffic",
  minimal: "minimal HBM traffic",
  link: "busiest link",
};

const down = (value: number) => 10 ** Math.floor(Math.log10(value));
const up = (value: number) => 10 ** Math.ceil(Math.log10(value));

/**
 * The chart of one or more launches' rooflines (`entries`, named for the legend when several: A
 * and B of a comparison). Dtypes of an engine at one peak share a line, and so do the entries'
 * equal lines. Each ceiling runs from where the entry's fastest slope reaches it to
 * the right edge; each slope from the bottom edge up to the highest ceiling (to the right edge
 * when the launch ran no engine with a peak).
 */
export function rooflineView(
  entries: readonly { readonly name: string; readonly roofline: LaunchRoofline }[],
): RooflineView {
  const prefix = (index: number) => (entries.length > 1 ? `${entries[index]?.name}: ` : "");
  const xs: number[] = [];
  const ys: number[] = [];
  for (const { roofline } of entries) {
    const top = Math.max(0, ...roofline.ceilings.map((ceiling) => ceiling.flopsPerS));
    for (const point of roofline.points) {
      xs.push(point.intensity);
      ys.push(point.flopsPerS);
    }
    for (const ceiling of roofline.ceilings) ys.push(ceiling.flopsPerS);
    if (top > 0) for (const slope of roofline.slopes) xs.push(top / slope.bytesPerS);
  }
  const positive = (values: number[]) => values.filter((value) => value > 0 && Number.isFinite(value));
  const px = positive(xs);
  const py = positive(ys);
  const x: [number, number] =
    px.length > 0 ? [down(Math.min(...px) / 4), up(Math.max(...px) * 4)] : [0.01, 1000];
  const y: [number, number] =
    py.length > 0 ? [down(Math.min(...py) / 4), up(Math.max(...py) * 1.2)] : [1e6, 1e15];
  const lines: (RooflineLine & { entry: number })[] = [];
  const marks: RooflineMark[] = [];
  entries.forEach(({ roofline }, entry) => {
    const top = Math.max(0, ...roofline.ceilings.map((ceiling) => ceiling.flopsPerS));
    const fastest = Math.max(0, ...roofline.slopes.map((slope) => slope.bytesPerS));
    for (const ceiling of sharedCeilings(roofline.ceilings)) {
      const start = fastest > 0 ? Math.max(x[0], ceiling.flopsPerS / fastest) : x[0];
      lines.push({
        kind: "ceiling",
        name: `${ceiling.name} ${formatSi(ceiling.flopsPerS, "FLOP/s")}`,
        entry,
        from: [start, ceiling.flopsPerS],
        to: [x[1], ceiling.flopsPerS],
      });
    }
    for (const slope of roofline.slopes) {
      const end = top > 0 ? Math.min(x[1], top / slope.bytesPerS) : x[1];
      const start = Math.max(x[0], y[0] / slope.bytesPerS);
      if (!(start < end)) continue;
      lines.push({
        kind: "slope",
        name: `${slope.resource === "link" ? "link " : ""}${slope.name} ${formatSi(slope.bytesPerS, "B/s")}`,
        entry,
        from: [start, start * slope.bytesPerS],
        to: [end, end * slope.bytesPerS],
      });
    }
    for (const point of roofline.points)
      marks.push({
        entry,
        traffic: point.traffic,
        name: `${prefix(entry)}${TRAFFIC_NAMES[point.traffic]}`,
        x: point.intensity,
        y: point.flopsPerS,
        bytes: point.bytes,
      });
  });
  return { lines: sharedLines(lines, entries.length, prefix), marks, x, y };
}

/** Each line once: one every entry has is drawn once, unnamed by entry; others carry their entry's name. */
function sharedLines(
  lines: readonly RooflineLine[],
  entries: number,
  prefix: (entry: number) => string,
): RooflineLine[] {
  const key = (line: RooflineLine) => `${line.kind} ${line.name} ${line.from.join()} ${line.to.join()}`;
  const owners = new Map<string, Set<number | null>>();
  for (const line of lines) {
    const set = owners.get(key(line)) ?? new Set();
    set.add(line.entry);
    owners.set(key(line), set);
  }
  const seen = new Set<string>();
  const out: RooflineLine[] = [];
  for (const line of lines) {
    const id = key(line);
    if (seen.has(id)) continue;
    seen.add(id);
    const shared = entries > 1 && (owners.get(id)?.size ?? 0) === entries;
    if (shared || entries <= 1) out.push(shared ? { ...line, entry: null } : line);
    else out.push({ ...line, name: `${prefix(line.entry ?? 0)}${line.name}` });
  }
  return out;
}

/** The ceilings with the dtypes of one engine at the same peak as one line: `PE_GEMM f16, bf16`. */
function sharedCeilings(
  ceilings: LaunchRoofline["ceilings"],
): { readonly name: string; readonly flopsPerS: number }[] {
  const merged: { engine: string; dtypes: string[]; flopsPerS: number }[] = [];
  for (const ceiling of ceilings) {
    const same = merged.find(
      (line) => line.engine === ceiling.engine && line.flopsPerS === ceiling.flopsPerS,
    );
    if (same !== undefined && ceiling.dtype !== null) same.dtypes.push(ceiling.dtype);
    else
      merged.push({
        engine: ceiling.engine,
        dtypes: ceiling.dtype === null ? [] : [ceiling.dtype],
        flopsPerS: ceiling.flopsPerS,
      });
  }
  return merged.map((line) => ({
    name: line.engine === "gemm" ? `PE_GEMM ${line.dtypes.join(", ")}`.trim() : "PE_MATH",
    flopsPerS: line.flopsPerS,
  }));
}
