import type { SweepRow } from "@kb/sweep";

// What `kb web results.jsonl` serves at GET /api/sweep: declared here once, for the sweep page
// (sweep-main.ts) and for the server (apps/web/src/server/web-sweep.ts imports these types as
// `@kb/web-ui/sweep-api`). A point's run is then `GET /api/data?run=<digest>` (a `WebData` of
// api.ts) and its page `/?run=<digest>`.

/** Everything `kb web` serves at `/api/sweep`: a sweep's results table and which runs it can open. */
export interface SweepData {
  readonly schema: "kb.sweep-web/1";
  /** The JSONL file, as given. */
  readonly file: string;
  /** The results cache (`kb web --cache DIR`), resolved; null when none was given. */
  readonly cacheDir: string | null;
  /** Axis names, in the order the rows first name them. */
  readonly axes: readonly string[];
  /** Metric names, in the order the rows first name them. */
  readonly metrics: readonly string[];
  /** One row per point (the last row of a point key wins, as a resumed sweep reads it), in file order. */
  readonly rows: readonly SweepWebRow[];
  /** Things the user should know (a last line cut short). */
  readonly warnings: readonly string[];
}

/** A row of the sweep's table, and whether its run can be opened. */
export interface SweepWebRow extends SweepRow {
  /** True when the cache holds `<digest>.json`: `/?run=<digest>` shows the run. */
  readonly cached: boolean;
}
