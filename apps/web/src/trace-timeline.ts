import { groupDigits, KbError } from "@kb/errors";
import type { WebTimeline } from "./api.js";
import { SliceCollector, type SliceIndex } from "./slice-index.js";

// A Chrome trace (kb run --trace) as the timeline `kb web` serves: every slice kept, in a
// SliceIndex (typed arrays and a busy-time pyramid), counters over the whole run. Browser-safe:
// the playground builds the timeline of a run's trace in memory with it.

/** Counter points sent as they are, over all series of a trace; more are binned ({@link COUNTER_BINS}). */
export const MAX_TIMELINE_COUNTER_POINTS = 200_000;

/**
 * Tracks (distinct pid, tid pairs with slices or open slices) a trace may have: kb run --trace
 * writes one per component lane (a few thousand on the largest shipped topology); past this, a
 * trace would cost gigabytes in busy bins, so it is refused.
 */
export const MAX_TIMELINE_TRACKS = 65_536;

/** Bins over the run of each counter series of a trace with more than {@link MAX_TIMELINE_COUNTER_POINTS} points. */
export const COUNTER_BINS = 2048;

/** A trace read: what `/api/data` sends about it and the slices `/api/timeline` answers from. */
export interface TraceTimeline {
  readonly timeline: WebTimeline;
  readonly slices: SliceIndex;
}

/**
 * Turns Chrome trace events, given one by one to {@link add}, into a timeline: B/E pairs (and X
 * complete events) become slices of their (pid, tid) track, `launch` instants become markers,
 * C events counter points. Times `ts` (µs) become ns.
 */
export class TimelineBuilder {
  private readonly processNames = new Map<number, string>();
  private readonly threadNames = new Map<string, string>();
  /** Tracks by `pid:tid`, with their open slices (start ns, name index). */
  private readonly tracks = new Map<
    string,
    { pid: number; tid: number; index: number; open: [number, number, number][]; used: boolean }
  >();
  private readonly nameIndex = new Map<string, number>();
  /** Kernel lines (`args.site` of slices) by first appearance. */
  private readonly siteIndex = new Map<string, number>();
  private readonly collector = new SliceCollector();
  private readonly markers: { tNs: number; label: string }[] = [];
  private readonly counters = new Map<string, { name: string; key: string; points: number[] }>();
  private endNs = 0;

  constructor(private readonly file: string) {}

  /**
   * Adds trace event number `index`. Throws a `KbError` naming the file and the event when it is
   * not an object with a string `ph` and numeric `ts`, `pid` and `tid` (metadata events need no `ts`).
   */
  add(event: unknown, index: number): void {
    if (!isRecord(event) || typeof event.ph !== "string") {
      throw badEvent(this.file, index, "is not an object with a string ph");
    }
    const pid = Number(event.pid ?? 0);
    const tid = Number(event.tid ?? 0);
    if (event.ph === "M") {
      const name = isRecord(event.args) ? event.args.name : undefined;
      if (typeof name !== "string") return;
      if (event.name === "process_name") this.processNames.set(pid, name);
      else if (event.name === "thread_name") this.threadNames.set(`${pid}:${tid}`, name);
      return;
    }
    if (typeof event.ts !== "number" || !Number.isFinite(pid) || !Number.isFinite(tid)) {
      throw badEvent(this.file, index, "has no numeric ts, pid and tid");
    }
    const tNs = toNs(event.ts);
    if (tNs > this.endNs) this.endNs = tNs;
    const name = typeof event.name === "string" ? event.name : "";
    switch (event.ph) {
      case "B":
        this.trackOf(pid, tid).open.push([tNs, this.nameOf(name), this.siteOf(event.args)]);
        break;
      case "E": {
        const track = this.trackOf(pid, tid);
        const open = track.open.pop();
        if (open === undefined) break;
        track.used = true;
        this.collector.add(track.index, open[0], tNs, open[1], open[2]);
        break;
      }
      case "X": {
        const end = tNs + toNs(typeof event.dur === "number" ? event.dur : 0);
        if (end > this.endNs) this.endNs = end;
        const track = this.trackOf(pid, tid);
        track.used = true;
        this.collector.add(track.index, tNs, end, this.nameOf(name), this.siteOf(event.args));
        break;
      }
      case "i":
      case "I":
        if (event.cat === "launch" || event.cat === "launch_complete")
          this.markers.push({ tNs, label: name });
        break;
      case "C": {
        const value = isRecord(event.args) ? Object.values(event.args).find((v) => typeof v === "number") : 0;
        if (typeof value !== "number") break;
        const key = `${pid}:${tid}`;
        const id = `${key}\u0000${name}`;
        let series = this.counters.get(id);
        if (series === undefined) {
          series = { name, key, points: [] };
          this.counters.set(id, series);
        }
        series.points.push(tNs, value);
        break;
      }
      default:
    }
  }

  /** The timeline of the events added. */
  finish(label: string): TraceTimeline {
    const trackName = (key: string, pid: number, tid: number) =>
      this.threadNames.get(key) ?? `${this.processNames.get(pid) ?? `pid ${pid}`} / tid ${tid}`;
    // Processes (cubes) in trace order; within one, tracks by name with numbers compared as
    // numbers, so a PE's components sit together and lanes count up (hbm#2 before hbm#10).
    const ordered = [...this.tracks.entries()]
      .filter(([, track]) => track.used)
      .map(([key, track]) => ({ key, track, name: trackName(key, track.pid, track.tid) }))
      .sort((a, b) => a.track.pid - b.track.pid || naturalOrder(a.name, b.name) || a.track.tid - b.track.tid);
    const shown = new Uint32Array(this.tracks.size);
    ordered.forEach(({ track }, index) => {
      shown[track.index] = index;
    });
    const endNs = this.endNs;
    const slices = this.collector.build(shown, ordered.length, [...this.nameIndex.keys()], endNs, {
      tracks: ordered.map(({ name }) => name),
      sites: [...this.siteIndex.keys()],
    });
    const pointCount = [...this.counters.values()].reduce((sum, series) => sum + series.points.length / 2, 0);
    const binned = pointCount > MAX_TIMELINE_COUNTER_POINTS && endNs > 0;
    const timeline: WebTimeline = {
      file: this.file,
      label,
      endNs,
      tracks: ordered.map(({ track, name }) => ({
        name,
        group: this.processNames.get(track.pid) ?? `pid ${track.pid}`,
      })),
      totalSlices: slices.size,
      markers: this.markers,
      counters: [...this.counters.values()].map((series) => {
        const [pid, tid] = series.key.split(":").map(Number) as [number, number];
        const track = trackName(series.key, pid, tid);
        if (!binned) return { name: series.name, track, points: series.points };
        // Every counter is a step function: a point holds until the next (HBM GB/s writes its 0s).
        const holdNs = Number.POSITIVE_INFINITY;
        const binNs = endNs / COUNTER_BINS;
        return {
          name: series.name,
          track,
          points: binCounter(series.points, binNs, COUNTER_BINS, holdNs),
          binNs,
        };
      }),
    };
    return { timeline, slices };
  }

  private nameOf(name: string): number {
    let index = this.nameIndex.get(name);
    if (index === undefined) {
      index = this.nameIndex.size;
      this.nameIndex.set(name, index);
    }
    return index;
  }

  /** The index of a slice's kernel line (`args.site`, a string), -1 without one. */
  private siteOf(args: unknown): number {
    const site = isRecord(args) ? args.site : undefined;
    if (typeof site !== "string") return -1;
    let index = this.siteIndex.get(site);
    if (index === undefined) {
      index = this.siteIndex.size;
      this.siteIndex.set(site, index);
    }
    return index;
  }

  private trackOf(pid: number, tid: number) {
    const key = `${pid}:${tid}`;
    let track = this.tracks.get(key);
    if (track === undefined) {
      if (this.tracks.size === MAX_TIMELINE_TRACKS) {
        throw new KbError(
          "CLI_USAGE",
          `a trace of more than ${groupDigits(MAX_TIMELINE_TRACKS)} tracks (distinct pid, tid pairs), the most kb web draws (kb run --trace writes one per component lane): not a trace kb web can read. ${WHAT_KB_WEB_READS}`,
          { context: { file: this.file } },
        );
      }
      track = { pid, tid, index: this.tracks.size, open: [], used: false };
      this.tracks.set(key, track);
    }
    return track;
  }
}

/** The timeline of a list of trace events (see {@link TimelineBuilder}). */
export function timelineOfTrace(
  events: readonly unknown[],
  file: string,
  label = baseName(file),
): TraceTimeline {
  const builder = new TimelineBuilder(file);
  events.forEach((event, index) => {
    builder.add(event, index);
  });
  return builder.finish(label);
}

/**
 * A counter's samples (flat `tNs, value`, in time order) as `bins` bins of `binNs` from 0: the
 * mean of each bin, time-weighted, each sample holding until the next one, at
 * most `holdNs` (and the last until the end of the last bin, at most `holdNs`).
 */
export function binCounter(points: readonly number[], binNs: number, bins: number, holdNs: number): number[] {
  const sums = new Float64Array(bins);
  const endNs = binNs * bins;
  for (let i = 0; i + 1 < points.length; i += 2) {
    const t = points[i] as number;
    const next = points[i + 2] === undefined ? endNs : (points[i + 2] as number);
    const until = Math.min(next, t + holdNs, endNs);
    const level = points[i + 1] as number;
    if (level === 0 || until <= t) continue;
    let bin = Math.max(0, Math.floor(t / binNs));
    let at = t;
    while (at < until && bin < bins) {
      const end = Math.min(until, (bin + 1) * binNs);
      sums[bin] = (sums[bin] as number) + (end - at) * level;
      at = end;
      bin++;
    }
  }
  const out: number[] = [];
  for (let bin = 0; bin < bins; bin++) {
    out.push(Math.round(((sums[bin] as number) / binNs) * 1e3) / 1e3);
  }
  return out;
}

/** The last segment of a `/` or `\\` separated path (node:path's basename, in the browser too). */
export function baseName(file: string): string {
  return file.slice(Math.max(file.lastIndexOf("/"), file.lastIndexOf("\\")) + 1);
}

/** Compares names with their digit runs as numbers: `pe2` < `pe10`, `hbm#2` < `hbm#10`. */
function naturalOrder(a: string, b: string): number {
  const pattern = /(\d+)|(\D+)/g;
  const partsA = a.match(pattern) ?? [];
  const partsB = b.match(pattern) ?? [];
  for (let i = 0; i < Math.min(partsA.length, partsB.length); i++) {
    const x = partsA[i] as string;
    const y = partsB[i] as string;
    if (x === y) continue;
    const numeric = /^\d/.test(x) && /^\d/.test(y);
    if (numeric && Number(x) !== Number(y)) return Number(x) - Number(y);
    return x < y ? -1 : 1;
  }
  return partsA.length - partsB.length;
}

/** Trace µs as ns, without float noise (ps resolution). */
function toNs(us: number): number {
  return Math.round(us * 1e6) / 1e3;
}

function badEvent(file: string, index: number, problem: string): KbError {
  return new KbError(
    "CLI_USAGE",
    `traceEvents[${index}] ${problem}: not a Chrome trace kb web can read. ${WHAT_KB_WEB_READS}`,
    { context: { file } },
  );
}

/** A JSON object (not null, not an array). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** What kb web reads, for messages about a file it cannot. */
export const WHAT_KB_WEB_READS =
  'kb web reads results files (kb run --json > FILE, with "schema": "kb.results/1") and Chrome traces (kb run --trace FILE, with "traceEvents").';
