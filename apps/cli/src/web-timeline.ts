import { basename } from "node:path";
import { KbError } from "@kb/errors";
import type { WebTimeline } from "@kb/web-ui/api";

// A Chrome trace (kb run --trace) as the timeline `kb web` serves.

/** Slices kept per timeline: a canvas timeline stays responsive up to about this many. */
export const MAX_TIMELINE_SLICES = 200_000;

/** Counter points kept per timeline. */
export const MAX_TIMELINE_COUNTER_POINTS = 200_000;

/**
 * Turns Chrome trace events into a timeline: B/E pairs (and X complete events) become slices of
 * their (pid, tid) track, `launch` instants become markers, C events counter points. Times `ts`
 * (µs) become ns. Slices beyond `maxSlices` are counted, not kept.
 *
 * Throws a `KbError` naming the file and the event when an event is not an object with a string
 * `ph` and numeric `ts`, `pid` and `tid` (metadata events need no `ts`).
 */
export function timelineOfTrace(
  events: readonly unknown[],
  file: string,
  label = basename(file),
  maxSlices = MAX_TIMELINE_SLICES,
): WebTimeline {
  const processNames = new Map<number, string>();
  const threadNames = new Map<string, string>();
  /** Tracks by `pid:tid`, with their open slices (start ns, name index). */
  const tracks = new Map<string, { pid: number; tid: number; open: [number, number][]; used: boolean }>();
  const nameIndex = new Map<string, number>();
  const raw: { track: string; start: number; end: number; name: number }[] = [];
  const markers: { tNs: number; label: string }[] = [];
  const counters = new Map<string, { name: string; key: string; points: number[] }>();
  let counterPoints = 0;
  let totalSlices = 0;
  let endNs = 0;

  const nameOf = (name: string): number => {
    let index = nameIndex.get(name);
    if (index === undefined) {
      index = nameIndex.size;
      nameIndex.set(name, index);
    }
    return index;
  };
  const trackOf = (pid: number, tid: number) => {
    const key = `${pid}:${tid}`;
    let track = tracks.get(key);
    if (track === undefined) {
      track = { pid, tid, open: [], used: false };
      tracks.set(key, track);
    }
    return track;
  };
  const slice = (key: string, start: number, end: number, name: number) => {
    totalSlices++;
    if (raw.length < maxSlices) raw.push({ track: key, start, end, name });
  };

  events.forEach((event, index) => {
    if (!isRecord(event) || typeof event.ph !== "string") {
      throw badEvent(file, index, "is not an object with a string ph");
    }
    const pid = Number(event.pid ?? 0);
    const tid = Number(event.tid ?? 0);
    if (event.ph === "M") {
      const name = isRecord(event.args) ? event.args.name : undefined;
      if (typeof name !== "string") return;
      if (event.name === "process_name") processNames.set(pid, name);
      else if (event.name === "thread_name") threadNames.set(`${pid}:${tid}`, name);
      return;
    }
    if (typeof event.ts !== "number" || !Number.isFinite(pid) || !Number.isFinite(tid)) {
      throw badEvent(file, index, "has no numeric ts, pid and tid");
    }
    const tNs = toNs(event.ts);
    endNs = Math.max(endNs, tNs);
    const name = typeof event.name === "string" ? event.name : "";
    switch (event.ph) {
      case "B":
        trackOf(pid, tid).open.push([tNs, nameOf(name)]);
        break;
      case "E": {
        const track = trackOf(pid, tid);
        const open = track.open.pop();
        if (open === undefined) break;
        track.used = true;
        slice(`${pid}:${tid}`, open[0], tNs, open[1]);
        break;
      }
      case "X": {
        const end = tNs + toNs(typeof event.dur === "number" ? event.dur : 0);
        endNs = Math.max(endNs, end);
        const track = trackOf(pid, tid);
        track.used = true;
        slice(`${pid}:${tid}`, tNs, end, nameOf(name));
        break;
      }
      case "i":
      case "I":
        if (event.cat === "launch" || event.cat === "launch_complete") markers.push({ tNs, label: name });
        break;
      case "C": {
        const value = isRecord(event.args) ? Object.values(event.args).find((v) => typeof v === "number") : 0;
        if (typeof value !== "number" || counterPoints >= MAX_TIMELINE_COUNTER_POINTS) break;
        const key = `${pid}:${tid}`;
        const id = `${key}\u0000${name}`;
        let series = counters.get(id);
        if (series === undefined) {
          series = { name, key, points: [] };
          counters.set(id, series);
        }
        series.points.push(tNs, value);
        counterPoints++;
        break;
      }
      default:
    }
  });

  const trackName = (key: string, pid: number, tid: number) =>
    threadNames.get(key) ?? `${processNames.get(pid) ?? `pid ${pid}`} / tid ${tid}`;
  // Processes (cubes) in trace order; within one, tracks by name with numbers compared as
  // numbers, so a PE's components sit together and lanes count up (hbm#2 before hbm#10).
  const ordered = [...tracks.entries()]
    .filter(([, track]) => track.used)
    .map(([key, track]) => ({ key, track, name: trackName(key, track.pid, track.tid) }))
    .sort((a, b) => a.track.pid - b.track.pid || naturalOrder(a.name, b.name) || a.track.tid - b.track.tid);
  const trackIndex = new Map(ordered.map(({ key }, index) => [key, index]));
  const slices: number[] = [];
  raw.sort((a, b) => a.start - b.start);
  for (const entry of raw) {
    slices.push(trackIndex.get(entry.track) as number, entry.start, entry.end, entry.name);
  }
  return {
    file,
    label,
    endNs,
    tracks: ordered.map(({ track, name }) => ({
      name,
      group: processNames.get(track.pid) ?? `pid ${track.pid}`,
    })),
    names: [...nameIndex.keys()],
    slices,
    totalSlices,
    markers,
    counters: [...counters.values()].map((series) => {
      const [pid, tid] = series.key.split(":").map(Number) as [number, number];
      return { name: series.name, track: trackName(series.key, pid, tid), points: series.points };
    }),
  };
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
