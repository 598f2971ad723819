import { CATEGORY_PALETTE } from "./colour.js";
import { formatNumber } from "./format.js";
import { metricName, metricWords } from "./metric-names.js";
import type { SweepData, SweepWebRow } from "./sweep-api.js";

// The sweep page's arithmetic, without the DOM: which way a metric is better, the Pareto front of
// two metrics, the table's columns and order, and the dimensions of the parallel coordinates.

/** Which way a metric is better. */
export type Direction = "min" | "max";

/**
 * Words that make a metric "higher is better": a word of the name (split at non-letters and at
 * camelCase humps, lower-cased) that begins or ends with one of these.
 */
const MAXIMISE_WORDS: readonly string[] = [
  "bandwidth",
  "bw",
  "gbps",
  "gbs",
  "util",
  "efficiency",
  "throughput",
  "flops",
  "fraction",
  "percent",
  "pct",
  "speedup",
  "hit",
];

/** Words of energy and power: something "per" one of them is work per joule or watt (an efficiency). */
const ENERGY_WORDS: readonly string[] = [
  "j",
  "joule",
  "joules",
  "pj",
  "nj",
  "uj",
  "mj",
  "w",
  "watt",
  "watts",
  "mw",
];

/**
 * The default direction of a metric, from its name: maximise when a word of it begins or ends with
 * bandwidth, bw, gbps, gbs, util, efficiency, throughput, flops, fraction, percent, pct, speedup or
 * hit (`busbw_gbs`, `hbmUtilisation`, `gemm_fraction`, `tflops`, a model's `row_hits`), or when it
 * is something per joule or watt (`tokens_per_j`, `perf_per_watt`); minimise anything else
 * (`time_ns`, `latency_us`, `cycles`, `row_conflicts`, `energy_j`, `power_w`, `edp`, `j_per_token`:
 * times, latencies, energies and costs, so time against energy is a front of both minimised). The
 * page lets the user change it per metric.
 */
export function metricDirection(name: string): Direction {
  // Letters only: `tflops2` counts as `tflops`.
  const words = metricWords(name).flatMap((word) => word.split(/[^a-z]+/).filter((part) => part !== ""));
  const perEnergy = words.some(
    (word, index) => word === "per" && ENERGY_WORDS.includes(words[index + 1] ?? ""),
  );
  const maximise =
    perEnergy ||
    words.some((word) => MAXIMISE_WORDS.some((stem) => word.startsWith(stem) || word.endsWith(stem)));
  return maximise ? "max" : "min";
}

/**
 * Which of `points` ([x, y] pairs) are on the Pareto front: no other point is at least as good in
 * both coordinates and better in one (`directions` says which way is better for x and for y).
 * Points with the same coordinates are both on the front or both off it. O(n log n).
 */
export function paretoFront(
  points: readonly (readonly [number, number])[],
  directions: readonly [Direction, Direction],
): boolean[] {
  // Scores to minimise.
  const sx = directions[0] === "min" ? 1 : -1;
  const sy = directions[1] === "min" ? 1 : -1;
  const scores = points.map(([x, y]) => [x * sx, y * sy] as const);
  const order = scores.map((_, index) => index);
  order.sort((a, b) => {
    const [ax, ay] = scores[a] as readonly [number, number];
    const [bx, by] = scores[b] as readonly [number, number];
    return ax - bx || ay - by;
  });
  const onFront = points.map(() => false);
  let bestX = Number.NaN;
  let bestY = Number.POSITIVE_INFINITY;
  for (const index of order) {
    const [x, y] = scores[index] as readonly [number, number];
    // Sorted by x then y: a point is dominated unless its y beats every y before it, or it is
    // the very point that set the best y (a twin of a point on the front).
    if (y < bestY) {
      onFront[index] = true;
      bestY = y;
      bestX = x;
    } else if (y === bestY && x === bestX) {
      onFront[index] = true;
    }
  }
  return onFront;
}

/** A point of the scatter: a row with numbers for both metrics. */
export interface PlotPoint {
  readonly row: SweepWebRow;
  readonly x: number;
  readonly y: number;
}

/** What the scatter of metric `x` against metric `y` draws. */
export interface ScatterModel {
  /** Points on the Pareto front, by x (best first along the front's line). */
  readonly front: readonly PlotPoint[];
  /** The other ok points. */
  readonly others: readonly PlotPoint[];
  /** Failed rows: never on the front, listed apart. */
  readonly failed: readonly SweepWebRow[];
  /** Ok rows without a finite number for x or y. */
  readonly missing: readonly SweepWebRow[];
}

/** The scatter of metric `x` against metric `y`, its Pareto front for `directions` of x and y. */
export function scatterModel(
  rows: readonly SweepWebRow[],
  x: string,
  y: string,
  directions: readonly [Direction, Direction],
): ScatterModel {
  const plotted: PlotPoint[] = [];
  const failed: SweepWebRow[] = [];
  const missing: SweepWebRow[] = [];
  for (const row of rows) {
    if (row.status !== "ok") {
      failed.push(row);
      continue;
    }
    const xValue = row.metrics[x];
    const yValue = row.metrics[y];
    if (
      typeof xValue === "number" &&
      Number.isFinite(xValue) &&
      typeof yValue === "number" &&
      Number.isFinite(yValue)
    ) {
      plotted.push({ row, x: xValue, y: yValue });
    } else {
      missing.push(row);
    }
  }
  const onFront = paretoFront(
    plotted.map((point) => [point.x, point.y] as const),
    directions,
  );
  const front = plotted.filter((_, index) => onFront[index]).sort((a, b) => a.x - b.x || a.y - b.y);
  const others = plotted.filter((_, index) => !onFront[index]);
  return { front, others, failed, missing };
}

/**
 * Whether a log scale suits the values an axis plots, and why not: every value must be > 0; the
 * scale starts on (`suggested`) when they span three decades or more, as a message size or a
 * time over such sizes does, where a linear axis piles the small points at the origin.
 */
export function logScaleOf(values: readonly number[]): {
  readonly possible: boolean;
  readonly suggested: boolean;
  readonly why: string;
} {
  if (values.length === 0) return { possible: false, suggested: false, why: "nothing plotted" };
  const smallest = Math.min(...values);
  if (!(smallest > 0))
    return { possible: false, suggested: false, why: `a value is ${smallest}: a log scale needs values > 0` };
  const span = Math.max(...values) / smallest;
  return {
    possible: true,
    suggested: span >= 1000,
    why: `values span ${span >= 10 ? Math.round(Math.log10(span)) : 0} decades`,
  };
}

/** Metrics with a finite number in at least one ok row, in the table's order: what the scatter can plot. */
export function numericMetrics(data: Pick<SweepData, "metrics" | "rows">): string[] {
  return data.metrics.filter((name) =>
    data.rows.some((row) => {
      const value = row.status === "ok" ? row.metrics[name] : null;
      return typeof value === "number" && Number.isFinite(value);
    }),
  );
}

/** Whether and how a point's run opens. */
export function runHint(row: SweepWebRow, cacheDir: string | null): string {
  if (row.cached) return "click to open its run";
  if (cacheDir === null) return "run with --cache DIR to open runs (kb web RESULTS.jsonl --cache DIR)";
  if (row.status === "failed") return "failed: no run to open";
  return `no results of this point in ${cacheDir} (its sweep ran without this --cache)`;
}

/** A column of the table. */
export interface SweepColumn {
  /** `point`, `status`, `reason`, or `axis:NAME` / `metric:NAME`. */
  readonly id: string;
  /** What the header says: a metric's name for people (`time (ns)`, see `metricName`). */
  readonly title: string;
  /** Numbers are right-aligned. */
  readonly numeric: boolean;
}

/** The table's columns: point, status, the axes, the metrics, then the reason a point failed. */
export function sweepColumns(data: Pick<SweepData, "axes" | "metrics" | "rows">): SweepColumn[] {
  const allNumbers = (values: unknown[]) =>
    values.every((value) => value === null || value === undefined || typeof value === "number");
  return [
    { id: "point", title: "point", numeric: true },
    { id: "status", title: "status", numeric: false },
    ...data.axes.map((name) => ({
      id: `axis:${name}`,
      title: name,
      numeric: allNumbers(data.rows.map((row) => row.values[name])),
    })),
    ...data.metrics.map((name) => ({
      id: `metric:${name}`,
      title: metricName(name).text,
      numeric: allNumbers(data.rows.map((row) => row.metrics[name])),
    })),
    { id: "reason", title: "reason", numeric: false },
  ];
}

/** The value of column `id` in `row` (undefined when the row has none). */
export function cellValue(row: SweepWebRow, id: string): unknown {
  if (id === "point") return row.point;
  if (id === "status") return row.status;
  if (id === "reason") return row.reason;
  if (id.startsWith("axis:")) return row.values[id.slice(5)];
  if (id.startsWith("metric:")) return row.metrics[id.slice(7)];
  return undefined;
}

/** A cell as text: integers whole, other numbers to 6 significant digits, strings as they are, lists and objects as JSON, nothing as an empty string. */
export function cellText(value: unknown): string {
  if (value === null || value === undefined) return "";
  if (typeof value === "string") return value;
  if (typeof value === "number") return Number.isInteger(value) ? String(value) : formatNumber(value, 6);
  return JSON.stringify(value);
}

/**
 * The rows sorted by column `id`: numbers by value, anything else by its text; rows without a
 * value last in both orders; ties keep the point order. Returns a new array.
 */
export function sortRows(rows: readonly SweepWebRow[], id: string, descending: boolean): SweepWebRow[] {
  const sign = descending ? -1 : 1;
  return [...rows].sort((a, b) => {
    const va = cellValue(a, id);
    const vb = cellValue(b, id);
    const noneA = va === null || va === undefined;
    const noneB = vb === null || vb === undefined;
    if (noneA || noneB) return noneA === noneB ? a.point - b.point : noneA ? 1 : -1;
    const order =
      typeof va === "number" && typeof vb === "number"
        ? va - vb
        : cellText(va).localeCompare(cellText(vb), "en", { numeric: true });
    return order * sign || a.point - b.point;
  });
}

/** A dimension of the parallel coordinates. */
export interface ParallelDimension {
  readonly name: string;
  /** Where it comes from: an axis or a metric. */
  readonly source: "axis" | "metric";
  /** Its category texts (in first-seen order) when any value is not a number; null for a value axis. */
  readonly categories: readonly string[] | null;
}

/** The parallel coordinates: a dimension per axis then per metric, and a line per ok row. */
export interface ParallelModel {
  readonly dimensions: readonly ParallelDimension[];
  /** The rows drawn (ok rows), in order. */
  readonly rows: readonly SweepWebRow[];
  /** Per row, its value on each dimension: a number, or a category text; null when it has none. */
  readonly values: readonly (readonly (number | string | null)[])[];
}

/** The parallel coordinates over the axes and metrics of the ok rows (failed rows have no metrics to draw). */
export function parallelModel(data: Pick<SweepData, "axes" | "metrics" | "rows">): ParallelModel {
  const rows = data.rows.filter((row) => row.status === "ok");
  const sources = [
    ...data.axes.map((name) => ({ name, source: "axis" as const })),
    ...data.metrics.map((name) => ({ name, source: "metric" as const })),
  ];
  const dimensions: ParallelDimension[] = sources.map(({ name, source }) => {
    const values = rows.map((row) => (source === "axis" ? row.values[name] : row.metrics[name]));
    const present = values.filter((value) => value !== null && value !== undefined);
    const numeric = present.every((value) => typeof value === "number" && Number.isFinite(value));
    return { name, source, categories: numeric ? null : [...new Set(present.map(cellText))] };
  });
  const values = rows.map((row) =>
    dimensions.map((dimension) => {
      const value = dimension.source === "axis" ? row.values[dimension.name] : row.metrics[dimension.name];
      if (value === null || value === undefined) return null;
      return dimension.categories === null ? (value as number) : cellText(value);
    }),
  );
  return { dimensions, rows, values };
}

/** The colours of the scatter's points by the value of one axis. */
export interface AxisColours {
  readonly axis: string;
  /** The axis's values as text, in order (numbers ascending, text in natural order), each with its colour. */
  readonly legend: readonly { readonly value: string; readonly colour: string }[];
  /** The colour of a row's value (the last legend colour's neighbour, grey, for a row without one). */
  colourOf(row: SweepWebRow): string;
}

/** Grey: a row without a value on the colouring axis. */
export const NO_VALUE_COLOUR = "#999999";

/**
 * Colours by the values of `axis` over `rows`: each distinct value its own colour of the
 * category palette (ten; more values reuse them in order, which the legend shows).
 */
export function axisColours(rows: readonly SweepWebRow[], axis: string): AxisColours {
  const present = rows
    .map((row) => row.values[axis])
    .filter((value) => value !== null && value !== undefined);
  const numeric = present.every((value) => typeof value === "number");
  const texts = [...new Set(present.map(cellText))];
  texts.sort((a, b) => (numeric ? Number(a) - Number(b) : a.localeCompare(b, "en", { numeric: true })));
  const legend = texts.map((value, index) => ({
    value,
    colour: CATEGORY_PALETTE[index % CATEGORY_PALETTE.length] as string,
  }));
  const byValue = new Map(legend.map((entry) => [entry.value, entry.colour]));
  return {
    axis,
    legend,
    colourOf: (row) => {
      const value = row.values[axis];
      if (value === null || value === undefined) return NO_VALUE_COLOUR;
      return byValue.get(cellText(value)) ?? NO_VALUE_COLOUR;
    },
  };
}
