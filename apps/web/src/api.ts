import type { RunResults } from "@kb/runtime";

// What `kb web` serves at GET /api/data. Declared here and in apps/cli/src/web-command.ts (the
// server), which cannot import each other's sources; the CLI's end-to-end test renders the page
// from the server's data, so a drift between the two fails there.

/** Everything the page shows. */
export interface WebData {
  readonly schema: "kb.web/1";
  readonly topology: WebTopology;
  readonly results: readonly WebResults[];
  readonly timelines: readonly WebTimeline[];
  readonly warnings: readonly string[];
}

/** The expanded topology graph: every node (containers and components) and every directed edge. */
export interface WebTopology {
  readonly file: string;
  readonly name: string;
  readonly nodes: readonly WebNode[];
  readonly edges: readonly WebEdge[];
}

/** A node of the expanded graph: `sip0.cube1.pe3.pe_gemm` of kind `pe_gemm`, or a container (`sip`, `cube`, `pe`, `hbm_channel`, `hbm_pc`). */
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
  /** GB/s. */
  readonly bw: number;
  readonly latencyNs: number;
}

/** One results file (`kb run --json`). */
export interface WebResults {
  readonly file: string;
  readonly label: string;
  readonly results: RunResults;
}

/** One trace file as a timeline; times in simulated ns. */
export interface WebTimeline {
  readonly file: string;
  readonly label: string;
  readonly endNs: number;
  /** `name`: the component id (a lane as `id#lane`); `group`: its Perfetto process (cube or SIP). */
  readonly tracks: readonly { readonly name: string; readonly group: string }[];
  readonly names: readonly string[];
  /** Flat: `track, startNs, endNs, nameIndex` per slice. */
  readonly slices: readonly number[];
  readonly totalSlices: number;
  readonly markers: readonly { readonly tNs: number; readonly label: string }[];
  /** `points` flat as `tNs, value` pairs. */
  readonly counters: readonly {
    readonly name: string;
    readonly track: string;
    readonly points: readonly number[];
  }[];
}
