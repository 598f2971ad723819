import type { RunResults } from "@kb/runtime";
import type { WebTimeline } from "./api.js";

/** A headline number of a run. */
export interface Headline {
  readonly label: string;
  /** How the page writes it: simulated time, a rate, a fraction. */
  readonly unit: "ns" | "FLOP/s" | "B/s" | "fraction" | "count";
  readonly value: number;
  /** True when less is better (time); ratios are still B / A. */
  readonly lowerIsBetter: boolean;
}

/** The numbers the page puts first and compares: time, throughput against peak, roofline. */
export function headlines(results: RunResults): Headline[] {
  return [
    { label: "simulated time", unit: "ns", value: results.simTimeNs, lowerIsBetter: true },
    { label: "achieved FLOP/s", unit: "FLOP/s", value: results.achieved.flopsPerS, lowerIsBetter: false },
    { label: "HBM bytes/s", unit: "B/s", value: results.achieved.hbmBytesPerS, lowerIsBetter: false },
    { label: "GEMM of peak", unit: "fraction", value: results.achieved.gemmFraction, lowerIsBetter: false },
    { label: "HBM of peak", unit: "fraction", value: results.achieved.hbmFraction, lowerIsBetter: false },
    { label: "roofline time", unit: "ns", value: results.rooflineNs, lowerIsBetter: true },
    { label: "events", unit: "count", value: results.events, lowerIsBetter: true },
  ];
}

/** One row of a comparison: the value in A and in B and B / A. */
export interface ComparedRow {
  readonly label: string;
  readonly unit: Headline["unit"];
  readonly a: number | null;
  readonly b: number | null;
  /** B / A; null when A is 0 or either is missing. */
  readonly ratio: number | null;
}

/** The headline numbers of two runs side by side, with B / A. */
export function compareHeadlines(a: RunResults, b: RunResults): ComparedRow[] {
  const bs = headlines(b);
  return headlines(a).map((row, index) => {
    const other = (bs[index] as Headline).value;
    return { label: row.label, unit: row.unit, a: row.value, b: other, ratio: ratioOf(row.value, other) };
  });
}

/** Utilisation by component kind of two runs, with B / A, over the kinds either used. */
export function compareKinds(a: RunResults, b: RunResults): ComparedRow[] {
  const used = (results: RunResults) =>
    new Map(results.byKind.filter((kind) => kind.ops > 0).map((kind) => [kind.kind, kind.utilisation]));
  const inA = used(a);
  const inB = used(b);
  const kinds = [...new Set([...inA.keys(), ...inB.keys()])].sort();
  return kinds.map((kind) => {
    const valueA = inA.get(kind) ?? null;
    const valueB = inB.get(kind) ?? null;
    return {
      label: kind,
      unit: "fraction",
      a: valueA,
      b: valueB,
      ratio: valueA === null || valueB === null ? null : ratioOf(valueA, valueB),
    };
  });
}

function ratioOf(a: number, b: number): number | null {
  return a === 0 || !Number.isFinite(a) || !Number.isFinite(b) ? null : b / a;
}

/** A per-kind number of a run, for the bar charts. */
export interface KindValue {
  readonly kind: string;
  readonly value: number;
}

/** Mean utilisation (0..1) of each kind that serviced anything, by kind name. */
export function utilisationByKind(results: RunResults): KindValue[] {
  return results.byKind
    .filter((kind) => kind.ops > 0)
    .map((kind) => ({ kind: kind.kind, value: kind.utilisation }))
    .sort((x, y) => (x.kind < y.kind ? -1 : 1));
}

/** Bandwidth of each kind that moved bytes: its bytes over the simulated time, GB/s (bytes/ns). */
export function bandwidthByKind(results: RunResults): KindValue[] {
  if (results.simTimeNs <= 0) return [];
  return results.byKind
    .filter((kind) => kind.bytes > 0)
    .map((kind) => ({ kind: kind.kind, value: kind.bytes / results.simTimeNs }))
    .sort((x, y) => (x.kind < y.kind ? -1 : 1));
}

/** A step series: `[tNs, value]` points. */
export interface Series {
  readonly name: string;
  readonly points: readonly (readonly [number, number])[];
}

/**
 * HBM bandwidth over time per cube (GB/s): the `HBM GB/s` counters of the trace (one per
 * pseudo-channel lane, each point the lane's bus time in the 1 µs bin it starts, times its
 * bandwidth; a 0 where the lane falls idle) summed over the lanes of each cube, a point wherever
 * a lane changes. A point holds until the lane's next one, at most `windowNs` (default: no limit).
 * Counters the server binned (`binNs`, a trace of many samples) are summed bin by bin.
 */
export function hbmBandwidthByCube(timeline: WebTimeline, windowNs = Number.POSITIVE_INFINITY): Series[] {
  const cubes = new Map<string, WebTimeline["counters"][number][]>();
  for (const counter of timeline.counters) {
    if (counter.name !== "HBM GB/s") continue;
    const cube = counter.track.replace(/\.hbm(#\d+)?$/, "");
    cubes.set(cube, [...(cubes.get(cube) ?? []), counter]);
  }
  const binned = [...cubes.values()].flat().find((lane) => lane.binNs !== undefined)?.binNs;
  if (binned !== undefined) {
    return [...cubes.entries()]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([cube, lanes]) => {
        const bins = Math.max(0, ...lanes.map((lane) => lane.points.length));
        const points: [number, number][] = [];
        for (let bin = 0; bin < bins; bin++) {
          const total = lanes.reduce((sum, lane) => sum + ((lane.points[bin] as number | undefined) ?? 0), 0);
          points.push([bin * binned, Math.round(total * 1e6) / 1e6]);
        }
        return { name: cube, points };
      });
  }
  return [...cubes.entries()]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([cube, lanes]) => {
      const changes: { t: number; lane: number; value: number }[] = [];
      lanes.forEach((lane, index) => {
        for (let i = 0; i + 1 < lane.points.length; i += 2) {
          const t = lane.points[i] as number;
          changes.push({ t, lane: index, value: lane.points[i + 1] as number });
          const next = lane.points[i + 2];
          if (Number.isFinite(windowNs) && (next === undefined || next > t + windowNs))
            changes.push({ t: t + windowNs, lane: index, value: 0 });
        }
      });
      changes.sort((x, y) => x.t - y.t || x.lane - y.lane);
      const current = new Array<number>(lanes.length).fill(0);
      let total = 0;
      const points: [number, number][] = [];
      for (const change of changes) {
        total += change.value - (current[change.lane] as number);
        current[change.lane] = change.value;
        const last = points[points.length - 1];
        const value = Math.round(total * 1e6) / 1e6;
        if (last !== undefined && last[0] === change.t) last[1] = value;
        else points.push([change.t, value]);
      }
      return { name: cube, points };
    });
}

/** One launch's line of the bottleneck summary. */
export interface VerdictLine {
  /** The results file's label. */
  readonly file: string;
  readonly launch: string;
  /** The verdict's text, or null in results written before verdicts were reported. */
  readonly text: string | null;
  readonly utilisation: number | null;
}

/** The bottleneck verdict of every launch of every results file, in order. */
export function verdictLines(results: readonly { label: string; results: RunResults }[]): VerdictLine[] {
  return results.flatMap((entry) =>
    entry.results.launches.map((launch) => ({
      file: entry.label,
      launch: launch.name,
      text: launch.verdict?.text ?? null,
      utilisation: launch.verdict?.utilisation ?? null,
    })),
  );
}

/**
 * The launches of two runs side by side, matched by position (the n-th launch of A with the n-th
 * of B): the kernel window's time, with B / A, labelled `name` (`nameA / nameB` when they differ).
 */
export function compareLaunches(a: RunResults, b: RunResults): ComparedRow[] {
  const count = Math.max(a.launches.length, b.launches.length);
  const rows: ComparedRow[] = [];
  for (let i = 0; i < count; i++) {
    const x = a.launches[i];
    const y = b.launches[i];
    const name =
      x?.name === y?.name || y === undefined
        ? (x?.name ?? "")
        : x === undefined
          ? y.name
          : `${x.name} / ${y.name}`;
    const timeA = x === undefined ? null : x.endNs - x.startNs;
    const timeB = y === undefined ? null : y.endNs - y.startNs;
    rows.push({
      label: `launch ${i + 1}: ${name} time`,
      unit: "ns",
      a: timeA,
      b: timeB,
      ratio: timeA === null || timeB === null ? null : ratioOf(timeA, timeB),
    });
  }
  return rows;
}

/** One counter a component's timing model published (`components[].stats`), as the page shows it. */
export interface ModelCounterRow {
  readonly component: string;
  readonly impl: string;
  readonly name: string;
  readonly unit: string;
  readonly description: string;
  readonly total: number;
  /** The busiest and idlest port (`pc3` on an HBM controller, else the port number) with values; null without per-port values. */
  readonly ports: {
    readonly max: number;
    readonly maxAt: string;
    readonly min: number;
    readonly minAt: string;
  } | null;
}

/**
 * Every counter the run's timing models published, component by component (busiest first, as
 * `kb run` picks the one it prints), in the order each model lists them; empty for results
 * without counters.
 */
export function modelCounterRows(results: RunResults): ModelCounterRow[] {
  const components = results.components
    .filter((row) => row.stats !== undefined && row.stats.length > 0)
    .sort((a, b) => b.utilisation - a.utilisation || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return components.flatMap((row) =>
    (row.stats ?? []).map((stat) => ({
      component: row.id,
      impl: row.impl,
      name: stat.name,
      unit: stat.unit,
      description: stat.description,
      total: stat.total,
      ports: portSpread(row.kind, stat.perPort),
    })),
  );
}

function portSpread(kind: string, values: readonly number[] | undefined): ModelCounterRow["ports"] {
  if (values === undefined || values.length === 0) return null;
  let max = 0;
  let min = 0;
  values.forEach((value, index) => {
    if (value > (values[max] as number)) max = index;
    if (value < (values[min] as number)) min = index;
  });
  const name = (index: number) => (kind === "hbm_ctrl" ? `pc${index}` : `port ${index}`);
  return { max: values[max] as number, maxAt: name(max), min: values[min] as number, minAt: name(min) };
}
