import type { RunResults } from "@kb/runtime";

// What `kb web` serves at GET /api/data: declared here once, for the page and for the server
// (apps/web/src/server/web-data.ts imports these types as `@kb/web-ui/api`).

/** Everything `kb web` serves at `/api/data`. */
export interface WebData {
  readonly schema: "kb.web/1";
  /** The expanded topology the diagram draws. */
  readonly topology: WebTopology;
  /** The results files given, in order (`kb run --json` output). */
  readonly results: readonly WebResults[];
  /** The trace files given, in order, as timelines. */
  readonly timelines: readonly WebTimeline[];
  /** Things the user should know (results of another topology, trace tracks not in it). */
  readonly warnings: readonly string[];
  /** The sweep point this run is, when kb web serves a sweep (`/?run=DIGEST`); absent otherwise. */
  readonly sweepPoint?: WebSweepPoint;
  /**
   * The text of the kernel files the results' `sites` name, by path as they name it (the source
   * view); absent or missing a file: the view lists that file's lines without text.
   */
  readonly sources?: Readonly<Record<string, string>>;
}

/** Which point of a sweep a run page shows, and the axis values it ran with. */
export interface WebSweepPoint {
  /** The sweep's results table (`results.jsonl`), as given to kb web. */
  readonly table: string;
  /** The point's number in the sweep's design. */
  readonly point: number;
  /** Its axis values, by axis name, in the table's order. */
  readonly values: Readonly<Record<string, unknown>>;
}

/** The expanded topology graph: every node (containers and components) and every directed edge. */
export interface WebTopology {
  /** The YAML file, as given or found. */
  readonly file: string;
  readonly name: string;
  readonly nodes: readonly WebNode[];
  readonly edges: readonly WebEdge[];
}

/** A node of the expanded graph (see `TopologyNode` of @kb/topology). */
export interface WebNode {
  readonly id: string;
  readonly kind: string;
  readonly impl: string | null;
  readonly parent: string | null;
  readonly sip: number | null;
  readonly cube: number | null;
  readonly pe: number | null;
  /** NOC grid position of routers, PEs and PE components, else null. */
  readonly row: number | null;
  readonly col: number | null;
}

/** A directed edge; a bidirectional link is two. */
export interface WebEdge {
  readonly src: string;
  readonly dst: string;
  /** Bandwidth, GB/s. */
  readonly bw: number;
  readonly latencyNs: number;
}

/** One results file. */
export interface WebResults {
  readonly file: string;
  /** A short name for legends: the file's base name (its path when two share one). */
  readonly label: string;
  readonly results: RunResults;
}

/**
 * One trace file as a timeline, in summary: its tracks, the launch markers and the counters
 * (binned over the whole run when there are many points). The slices stay on the server, which
 * answers `GET /api/timeline` ({@link WebTimelineWindow}) for the window the page shows. Times
 * are simulated ns.
 */
export interface WebTimeline {
  readonly file: string;
  readonly label: string;
  /** The last timestamp of the trace, ns. */
  readonly endNs: number;
  /** Tracks by process (cube) in trace order, then by name: `name` is the component id (a lane as `id#lane`), `group` its process. */
  readonly tracks: readonly { readonly name: string; readonly group: string }[];
  /** Slices in the trace, every one of them behind `/api/timeline`. */
  readonly totalSlices: number;
  /** Launch and launch-complete instants. */
  readonly markers: readonly { readonly tNs: number; readonly label: string }[];
  /**
   * Counter series (`HBM GB/s`, `queue depth`) over the whole run. Without `binNs`, `points` are
   * the samples, flat as `tNs, value` pairs; with `binNs` (a trace of many samples), `points` are
   * the means of consecutive bins of `binNs` from 0 to `endNs` (bin i from `i * binNs`): the
   * time-weighted mean of the series in the bin, a sample holding until the next one (an `HBM GB/s`
   * point is the bandwidth of the 1 µs bin it starts, and the counter writes a 0 when its port falls idle).
   */
  readonly counters: readonly {
    readonly name: string;
    readonly track: string;
    readonly points: readonly number[];
    readonly binNs?: number;
  }[];
}

/**
 * What `GET /api/timeline?trace=I&from=NS&to=NS&width=COLUMNS` answers: for timeline `I` of
 * {@link WebData.timelines}, per track and per column of the window `[fromNs, toNs)` split into
 * `width` equal columns, the fraction of the column's time the track was busy (the union of its
 * slices), and the slices themselves when the window holds at most {@link maxSlices}.
 */
export interface WebTimelineWindow {
  readonly fromNs: number;
  readonly toNs: number;
  readonly width: number;
  /**
   * Busy fraction per track and column, base64 of `tracks x width` bytes (track-major), 0..255
   * for 0..100 %; a column a slice touched is at least 1, even a zero-length slice.
   */
  readonly busy: string;
  /** Slices that overlap the window. */
  readonly sliceCount: number;
  /** At most this many slices are sent. */
  readonly maxSlices: number;
  /** The slices overlapping the window when `sliceCount <= maxSlices` (flat `track, startNs, endNs, nameIndex`, in start order), else null. */
  readonly slices: readonly number[] | null;
  /** Slice names, referenced by index from `slices`. */
  readonly names: readonly string[];
  /** True when the busy fractions come from the slices themselves; false: from time bins of `binNs` (each spread evenly over its bin). */
  readonly exact: boolean;
  readonly binNs: number;
  /**
   * With a filter asked (`&site=FILE:LINE`, `&q=TEXT`): the window counts and draws only the slices
   * it keeps, and this says what it kept over the whole run.
   */
  readonly filtered?: WebTimelineFiltered;
}

/**
 * Which slices a timeline shows (`GET /api/timeline`'s `site` and `q`): those a kernel line issued
 * (`args.site` of kb run --trace, `file:line`), and those whose name or track contains a text
 * (any case). Both given: slices that pass both.
 */
export interface WebTimelineFilter {
  readonly site?: string;
  readonly search?: string;
}

/** What a filter kept over the whole run. */
export interface WebTimelineFiltered extends WebTimelineFilter {
  /** Slices kept. */
  readonly slices: number;
  /** The tracks that hold a slice kept (ascending track numbers). */
  readonly tracks: readonly number[];
}
