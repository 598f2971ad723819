import type { WebTimelineWindow } from "./api.js";

// Every slice of a trace in typed arrays (a few million cost tens of MB, not an object each), with
// a pyramid of per-track busy time in bins over the run, so `kb web` answers any window of the
// run: busy fractions per pixel column, and the slices themselves when few enough. Browser-safe:
// kb web's server and the playground (over a run's trace in memory) answer windows from it.

/** Slices `GET /api/timeline` sends at most for one window; more are drawn as busy rows only. */
export const MAX_WINDOW_SLICES = 50_000;

/** Columns a window may ask for. */
export const MAX_WINDOW_COLUMNS = 4096;

/**
 * Track x column cells of one window, at most (10 bytes each while it is built, then base64): a
 * trace of more than 1,024 tracks gets fewer than 4,096 columns, so no request costs more than
 * ~50 MB and a second or so.
 */
export const MAX_WINDOW_CELLS = 4 * 1024 * 1024;

/** Bins of the finest pyramid level, at most (fewer when tracks x bins would pass {@link MAX_BIN_CELLS}). */
const MAX_BINS = 8192;
/** Track x bin cells of the finest level, at most: 8 bytes each, twice over all levels. */
const MAX_BIN_CELLS = 2_000_000;
/** The coarsest level has at least this many bins. */
const MIN_BINS = 64;

/** Collects slices (any order) and builds a {@link SliceIndex}. */
export class SliceCollector {
  private size = 0;
  private track = new Uint32Array(1024);
  private start = new Float64Array(1024);
  private end = new Float64Array(1024);
  private name = new Uint32Array(1024);
  /** The kernel line (`args.site`) of each slice: 1 + its index in the build's `sites`, 0 for none. */
  private site = new Uint32Array(1024);

  /** Slices added. */
  get count(): number {
    return this.size;
  }

  /**
   * Adds the slice `[startNs, endNs]` of `track` named `name` (indices), issued by kernel line
   * number `site` of the build's `sites` (-1: none).
   */
  add(track: number, startNs: number, endNs: number, name: number, site = -1): void {
    if (this.size === this.track.length) this.grow();
    const i = this.size++;
    this.track[i] = track;
    this.start[i] = startNs;
    this.end[i] = Math.max(startNs, endNs);
    this.name[i] = name;
    this.site[i] = site + 1;
  }

  /**
   * The index of the slices added, track numbers mapped through `trackOrder` (collected track ->
   * shown track), over `[0, endNs]`; `labels` names the shown tracks and the slices' kernel lines.
   */
  build(
    trackOrder: ArrayLike<number>,
    tracks: number,
    names: readonly string[],
    endNs: number,
    labels: SliceLabels = { tracks: [], sites: [] },
  ): SliceIndex {
    const n = this.size;
    const order = new Uint32Array(n);
    for (let i = 0; i < n; i++) order[i] = i;
    const start = this.start;
    let sorted = true;
    for (let i = 1; i < n && sorted; i++) sorted = (start[i - 1] as number) <= (start[i] as number);
    if (!sorted) order.sort((a, b) => (start[a] as number) - (start[b] as number) || a - b);
    const slices = {
      track: new Uint32Array(n),
      start: new Float64Array(n),
      end: new Float64Array(n),
      name: new Uint32Array(n),
      site: new Uint32Array(n),
    };
    for (let i = 0; i < n; i++) {
      const from = order[i] as number;
      slices.track[i] = trackOrder[this.track[from] as number] as number;
      slices.start[i] = start[from] as number;
      slices.end[i] = this.end[from] as number;
      slices.name[i] = this.name[from] as number;
      slices.site[i] = this.site[from] as number;
    }
    return new SliceIndex(slices, tracks, names, endNs, labels);
  }

  private grow(): void {
    const size = this.track.length * 2;
    const track = new Uint32Array(size);
    track.set(this.track);
    this.track = track;
    const start = new Float64Array(size);
    start.set(this.start);
    this.start = start;
    const end = new Float64Array(size);
    end.set(this.end);
    this.end = end;
    const name = new Uint32Array(size);
    name.set(this.name);
    this.name = name;
    const site = new Uint32Array(size);
    site.set(this.site);
    this.site = site;
  }
}

/** The names of a trace's shown tracks and of the kernel lines its slices carry (`args.site`). */
export interface SliceLabels {
  /** Track names, by shown track number. */
  readonly tracks: readonly string[];
  /** Kernel lines (`file:line`) the slices' `site` column refers to (1 + index; 0: none). */
  readonly sites: readonly string[];
}

/** Slices in typed arrays, in start order. */
export interface Slices {
  readonly track: Uint32Array;
  readonly start: Float64Array;
  readonly end: Float64Array;
  readonly name: Uint32Array;
  /** 1 + the index of the slice's kernel line in {@link SliceLabels.sites}; 0 for none. */
  readonly site: Uint32Array;
}

/** One pyramid level: busy ns and slices started per track and bin (track-major). */
interface Level {
  readonly bins: number;
  readonly binNs: number;
  readonly busy: Float32Array;
  readonly touched: Uint32Array;
}

/**
 * The slices of a trace in start order, with the latest end so far (to find those overlapping a
 * window by binary search) and the busy-time pyramid: level 0 has up to 8,192 bins over
 * `[0, endNs]`, each next level half as many.
 */
export class SliceIndex {
  /** `maxEnd[i]`: the latest end of slices `0..i`. */
  private readonly maxEnd: Float64Array;
  private readonly levels: Level[] = [];

  constructor(
    private readonly slices: Slices,
    /** Tracks shown. */
    readonly tracks: number,
    private readonly names: readonly string[],
    /** The end of the run, ns. */
    readonly endNs: number,
    /** Names of the tracks and of the slices' kernel lines. */
    readonly labels: SliceLabels = { tracks: [], sites: [] },
  ) {
    const n = slices.start.length;
    this.maxEnd = new Float64Array(n);
    let latest = Number.NEGATIVE_INFINITY;
    for (let i = 0; i < n; i++) {
      latest = Math.max(latest, slices.end[i] as number);
      this.maxEnd[i] = latest;
    }
    this.buildPyramid();
  }

  /** Slices held. */
  get size(): number {
    return this.slices.start.length;
  }

  /**
   * The index of the slices `keep(name, track, site)` keeps (`name`: the slice's name, `track`
   * its shown track number, `site` its kernel line or null), over the same run and tracks.
   */
  subset(keep: (name: string, track: number, site: string | null) => boolean): SliceIndex {
    const { track, start, end, name, site } = this.slices;
    const kept: number[] = [];
    for (let i = 0; i < start.length; i++) {
      const line = site[i] === 0 ? null : (this.labels.sites[(site[i] as number) - 1] ?? null);
      if (keep(this.names[name[i] as number] ?? "", track[i] as number, line)) kept.push(i);
    }
    const pick = <T extends Uint32Array | Float64Array>(from: T, to: T): T => {
      kept.forEach((at, i) => {
        to[i] = from[at] as number;
      });
      return to;
    };
    const n = kept.length;
    return new SliceIndex(
      {
        track: pick(track, new Uint32Array(n)),
        start: pick(start, new Float64Array(n)),
        end: pick(end, new Float64Array(n)),
        name: pick(name, new Uint32Array(n)),
        site: pick(site, new Uint32Array(n)),
      },
      this.tracks,
      this.names,
      this.endNs,
      this.labels,
    );
  }

  /** The shown tracks that hold at least one slice, ascending. */
  tracksWithSlices(): number[] {
    const seen = new Uint8Array(this.tracks);
    for (const track of this.slices.track) seen[track] = 1;
    const out: number[] = [];
    seen.forEach((flag, track) => {
      if (flag === 1) out.push(track);
    });
    return out;
  }

  /**
   * The window `[fromNs, toNs)` in `width` columns (see {@link WebTimelineWindow}); `fromNs`,
   * `toNs` clamped to the run, `width` to 1..{@link MAX_WINDOW_COLUMNS} and to at most
   * {@link MAX_WINDOW_CELLS} cells over all tracks (the answer's `width` says how many).
   */
  window(fromNs: number, toNs: number, width: number, maxSlices = MAX_WINDOW_SLICES): WebTimelineWindow {
    const widest = Math.min(MAX_WINDOW_COLUMNS, Math.floor(MAX_WINDOW_CELLS / Math.max(1, this.tracks)));
    const columns = Math.max(1, Math.min(widest, Math.floor(width)));
    const end = Math.max(this.endNs, 1);
    const from = Math.min(Math.max(0, fromNs), end);
    const to = Math.max(Math.min(end, toNs), from + 1e-3);
    const [first, last] = this.candidates(from, to);
    const { start, end: ends } = this.slices;
    let sliceCount = 0;
    for (let i = first; i < last; i++) {
      if ((ends[i] as number) >= from) sliceCount++;
    }
    const columnNs = (to - from) / columns;
    const finest = this.levels[0];
    const exact = finest === undefined || columnNs < finest.binNs;
    const busy = exact ? this.exactBusy(from, to, columns, first, last) : this.binnedBusy(from, to, columns);
    let slices: number[] | null = null;
    const names: string[] = [];
    if (sliceCount <= maxSlices) {
      slices = [];
      const nameIndex = new Map<number, number>();
      for (let i = first; i < last; i++) {
        if ((ends[i] as number) < from) continue;
        const name = this.slices.name[i] as number;
        let index = nameIndex.get(name);
        if (index === undefined) {
          index = names.length;
          nameIndex.set(name, index);
          names.push(this.names[name] ?? "");
        }
        slices.push(this.slices.track[i] as number, start[i] as number, ends[i] as number, index);
      }
    }
    return {
      fromNs: from,
      toNs: to,
      width: columns,
      busy: base64Of(busy),
      sliceCount,
      maxSlices,
      slices,
      names,
      exact,
      binNs: exact ? columnNs : (this.levelFor(columnNs) as Level).binNs,
    };
  }

  /**
   * `[first, last)`: the slices that may overlap `[from, to)` (all that do; some that end before
   * `from`); a window to the end of the run holds those that start at its very end too.
   */
  private candidates(from: number, to: number): [number, number] {
    const first = lowerBound(this.maxEnd, from);
    const last = to >= this.endNs ? upperBound(this.slices.start, to) : lowerBound(this.slices.start, to);
    return [first, Math.max(first, last)];
  }

  /** Busy bytes from the slices: the union of each track's slices, per column. */
  private exactBusy(from: number, to: number, columns: number, first: number, last: number): Uint8Array {
    const { track, start, end } = this.slices;
    const busyNs = new Float64Array(this.tracks * columns);
    const touched = new Uint8Array(this.tracks * columns);
    const covered = new Float64Array(this.tracks).fill(Number.NEGATIVE_INFINITY);
    const columnNs = (to - from) / columns;
    for (let i = first; i < last; i++) {
      const e = Math.min(end[i] as number, to);
      if (e < from) continue;
      const t = track[i] as number;
      const s = Math.max(start[i] as number, from);
      const row = t * columns;
      touched[row + Math.min(columns - 1, Math.floor((s - from) / columnNs))] = 1;
      const a = Math.max(s, covered[t] as number);
      if (e > (covered[t] as number)) covered[t] = e;
      if (e <= a) continue;
      spread(busyNs, row, a - from, e - from, columnNs, columns);
    }
    return quantise(busyNs, touched, columnNs);
  }

  /** Busy bytes from the coarsest pyramid level whose bins are no wider than a column. */
  private binnedBusy(from: number, to: number, columns: number): Uint8Array {
    const columnNs = (to - from) / columns;
    const level = this.levelFor(columnNs) as Level;
    const busyNs = new Float64Array(this.tracks * columns);
    const touched = new Uint8Array(this.tracks * columns);
    const firstBin = Math.max(0, Math.floor(from / level.binNs));
    const lastBin = Math.min(level.bins - 1, Math.floor(to / level.binNs));
    for (let t = 0; t < this.tracks; t++) {
      const row = t * columns;
      const binRow = t * level.bins;
      for (let b = firstBin; b <= lastBin; b++) {
        const busy = level.busy[binRow + b] as number;
        const count = level.touched[binRow + b] as number;
        if (busy === 0 && count === 0) continue;
        const a = Math.max(from, b * level.binNs);
        const e = Math.min(to, (b + 1) * level.binNs);
        if (e < a) continue;
        // A bin's busy time spread evenly over it: the part inside the window, column by column.
        if (busy > 0 && e > a) spread(busyNs, row, a - from, e - from, columnNs, columns, busy / level.binNs);
        if (count > 0) touched[row + Math.min(columns - 1, Math.floor((a - from) / columnNs))] = 1;
      }
    }
    return quantise(busyNs, touched, columnNs);
  }

  private levelFor(columnNs: number): Level | undefined {
    let chosen = this.levels[0];
    for (const level of this.levels) if (level.binNs <= columnNs) chosen = level;
    return chosen;
  }

  private buildPyramid(): void {
    if (this.endNs <= 0 || this.tracks === 0) return;
    let bins = MAX_BINS;
    while (bins > MIN_BINS && bins * this.tracks > MAX_BIN_CELLS) bins /= 2;
    const binNs = this.endNs / bins;
    const busy = new Float32Array(this.tracks * bins);
    const touched = new Uint32Array(this.tracks * bins);
    const sum = new Float64Array(this.tracks * bins);
    const covered = new Float64Array(this.tracks).fill(Number.NEGATIVE_INFINITY);
    const { track, start, end } = this.slices;
    for (let i = 0; i < start.length; i++) {
      const t = track[i] as number;
      const s = start[i] as number;
      const e = end[i] as number;
      const row = t * bins;
      const at = row + Math.min(bins - 1, Math.floor(s / binNs));
      touched[at] = (touched[at] as number) + 1;
      const a = Math.max(s, covered[t] as number);
      if (e > (covered[t] as number)) covered[t] = e;
      if (e > a) spread(sum, row, a, e, binNs, bins);
    }
    busy.set(sum);
    this.levels.push({ bins, binNs, busy, touched });
    while (bins / 2 >= MIN_BINS) {
      const below = this.levels[this.levels.length - 1] as Level;
      bins /= 2;
      const level: Level = {
        bins,
        binNs: below.binNs * 2,
        busy: new Float32Array(this.tracks * bins),
        touched: new Uint32Array(this.tracks * bins),
      };
      for (let t = 0; t < this.tracks; t++) {
        for (let b = 0; b < bins; b++) {
          const i = t * bins + b;
          const j = t * below.bins + 2 * b;
          level.busy[i] = (below.busy[j] as number) + (below.busy[j + 1] as number);
          level.touched[i] = (below.touched[j] as number) + (below.touched[j + 1] as number);
        }
      }
      this.levels.push(level);
    }
  }
}

/** Adds `weight` x the overlap of `[a, e)` (ns from the origin) with each cell of `cellNs` of `row`. */
function spread(
  cells: Float64Array,
  row: number,
  a: number,
  e: number,
  cellNs: number,
  count: number,
  weight = 1,
): void {
  let cell = Math.max(0, Math.floor(a / cellNs));
  let at = a;
  while (at < e && cell < count) {
    const cellEnd = cell === count - 1 ? Math.max(e, (cell + 1) * cellNs) : (cell + 1) * cellNs;
    const until = Math.min(e, cellEnd);
    if (until > at) cells[row + cell] = (cells[row + cell] as number) + (until - at) * weight;
    at = until;
    cell++;
  }
}

/** Busy ns per cell as 0..255 of `cellNs`; a touched cell at least 1. */
function quantise(busyNs: Float64Array, touched: Uint8Array, cellNs: number): Uint8Array {
  const bytes = new Uint8Array(busyNs.length);
  for (let i = 0; i < busyNs.length; i++) {
    const value = Math.min(255, Math.round(((busyNs[i] as number) / cellNs) * 255));
    bytes[i] = value === 0 && ((touched[i] as number) > 0 || (busyNs[i] as number) > 0) ? 1 : value;
  }
  return bytes;
}

/** The first index whose value is >= `value` (values ascending). */
function lowerBound(values: Float64Array, value: number): number {
  let low = 0;
  let high = values.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if ((values[mid] as number) < value) low = mid + 1;
    else high = mid;
  }
  return low;
}

/** The first index whose value is > `value` (values ascending). */
function upperBound(values: Float64Array, value: number): number {
  let low = 0;
  let high = values.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if ((values[mid] as number) <= value) low = mid + 1;
    else high = mid;
  }
  return low;
}

/** `bytes` as base64 (btoa over chunks: no Buffer, so the page and the playground run it too). */
export function base64Of(bytes: Uint8Array): string {
  const chunk = 0x8000;
  let text = "";
  for (let at = 0; at < bytes.length; at += chunk) {
    // apply, not a spread: three times faster on a typed array.
    text += String.fromCharCode.apply(
      null,
      bytes.subarray(at, Math.min(bytes.length, at + chunk)) as unknown as number[],
    );
  }
  return btoa(text);
}
