import type { WebTimelineFilter, WebTimelineWindow } from "./api.js";
import { MAX_WINDOW_SLICES, type SliceIndex } from "./slice-index.js";
import type { TimelineSource } from "./timeline.js";
import { filterKey, normalFilter, sliceTest } from "./timeline-filter-model.js";

// Windows of a trace's slices under a filter (a kernel line, a search): the slices the filter
// keeps, in an index of their own (its busy pyramid too), built on first use and kept for the few
// filters asked last. Browser-safe: kb web's server and the playground answer windows with it.

/** Filtered indexes kept per trace (each costs up to ~30 MB of busy bins on the largest traces). */
const KEPT_FILTERS = 4;

/** A trace's slices, answering windows with or without a filter. */
export class FilteredSlices {
  private readonly kept = new Map<string, SliceIndex>();

  constructor(readonly slices: SliceIndex) {}

  /** The window `[fromNs, toNs)` in `width` columns of the slices `filter` keeps (all without one). */
  window(
    fromNs: number,
    toNs: number,
    width: number,
    filter: WebTimelineFilter | null = null,
    maxSlices = MAX_WINDOW_SLICES,
  ): WebTimelineWindow {
    const normal = normalFilter(filter);
    if (normal === null) return this.slices.window(fromNs, toNs, width, maxSlices);
    const subset = this.subset(normal);
    return {
      ...subset.window(fromNs, toNs, width, maxSlices),
      filtered: { ...normal, slices: subset.size, tracks: subset.tracksWithSlices() },
    };
  }

  private subset(filter: WebTimelineFilter): SliceIndex {
    const key = filterKey(filter);
    let subset = this.kept.get(key);
    if (subset === undefined) {
      const test = sliceTest(filter);
      const tracks = this.slices.labels.tracks;
      subset = this.slices.subset((name, track, site) => test(name, tracks[track] ?? "", site));
      if (this.kept.size === KEPT_FILTERS) this.kept.delete(this.kept.keys().next().value as string);
    } else {
      this.kept.delete(key);
    }
    this.kept.set(key, subset);
    return subset;
  }
}

/**
 * A timeline source over traces in memory (the playground's): their windows from `slices`, with
 * filters; their files from `texts` (the trace JSON as written) for "Open in Perfetto".
 */
export function localTimelineSource(
  slices: readonly SliceIndex[],
  texts: readonly string[] = [],
): Required<TimelineSource> {
  const filtered = slices.map((index) => new FilteredSlices(index));
  return {
    async window(trace, fromNs, toNs, width, filter = null) {
      const index = filtered[trace];
      if (index === undefined) throw new Error(`no trace ${trace}: ${filtered.length} drawn`);
      return index.window(fromNs, toNs, width, filter);
    },
    async trace(trace) {
      const text = texts[trace];
      if (text === undefined) throw new Error(`no trace file ${trace}: ${texts.length} kept`);
      return new TextEncoder().encode(text).buffer as ArrayBuffer;
    },
  };
}
