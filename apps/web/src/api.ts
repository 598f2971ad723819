import type { RunResults } from "@kb/runtime";

// What `kb web` serves at GET /api/data: declared here once, for the page and for the server
// (apps/cli/src/web-data.ts imports these types as `@kb/web-ui/api`).

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
 * One trace file as a timeline: a track per component (Chrome thread), the slices of every
 * track, the launch markers and the counters. Times are simulated ns.
 */
export interface WebTimeline {
  readonly file: string;
  readonly label: string;
  /** The last timestamp of the trace, ns. */
  readonly endNs: number;
  /** Tracks by process (cube) in trace order, then by name: `name` is the component id (a lane as `id#lane`), `group` its process. */
  readonly tracks: readonly { readonly name: string; readonly group: string }[];
  /** Slice names, referenced by index from `slices`. */
  readonly names: readonly string[];
  /** Slices, flat: `track, startNs, endNs, nameIndex` per slice, in start order. */
  readonly slices: readonly number[];
  /** Slices in the trace; more than `slices.length / 4` when the timeline was cut at `MAX_TIMELINE_SLICES` (apps/cli/src/web-timeline.ts). */
  readonly totalSlices: number;
  /** Launch and launch-complete instants. */
  readonly markers: readonly { readonly tNs: number; readonly label: string }[];
  /** Counter series (`HBM GB/s`, `queue depth`): `points` flat as `tNs, value` pairs. */
  readonly counters: readonly {
    readonly name: string;
    readonly track: string;
    readonly points: readonly number[];
  }[];
}
