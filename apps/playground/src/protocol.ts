import type { RunResults } from "@kb/runtime";

// The messages between the playground page and its run worker (src/worker/): one definition,
// imported by both sides. Only plain data crosses (structured clone); code crosses as source text.

/** Where a message or error points in a file the page shows. */
export interface SourceLocation {
  /** A path of the playground's virtual files (`benches/vector-add.ts`, `topology.yaml`). */
  readonly file: string;
  /** 1-based. */
  readonly line: number;
  /** 1-based. */
  readonly column: number;
}

/** Page -> worker: run a bench. One run per worker at a time; Cancel terminates the worker. */
export interface RunRequest {
  readonly type: "run";
  /** Echoed in every answer, so a late message of an older run is recognised and dropped. */
  readonly id: number;
  /**
   * The bench and every file it imports by a relative path, by virtual path. The worker
   * transpiles them (TypeScript) and resolves `@kb/*` and `zod` imports to its own bundled copies.
   */
  readonly files: Readonly<Record<string, string>>;
  /** The bench's path among `files`. */
  readonly main: string;
  /** The topology YAML text and the name it is shown under (errors say `name:line:col`). */
  readonly topology: { readonly name: string; readonly text: string };
  /** Params as `kb run --param key=value` gives them (JSON where it parses). */
  readonly params: Readonly<Record<string, string>>;
  readonly verify: boolean;
  /** As `kb run --max-events` / `--max-sim-time` (ns); a `RUN_LIMIT` names them by {@link LIMIT_FIELDS}. */
  readonly limits: { readonly maxEvents?: number; readonly maxSimTimeNs?: number };
  /** Record a Chrome trace (for the timeline and the download). */
  readonly trace: boolean;
  /** Keep the op log (JSON lines, for the download). */
  readonly opLog: boolean;
}

/** Worker -> page: how far the run got (at most every ~100 ms). */
export interface RunProgressMessage {
  readonly type: "progress";
  readonly id: number;
  readonly stage: "transpile" | "build" | "phase1" | "phase2" | "reference" | "compare";
  /** Phase 1: simulated time and DES events so far. */
  readonly simTimeNs?: number;
  readonly events?: number;
  /** Phase 1: the host program's position in its plan (`sim.progress`), when it stated one. */
  readonly plan?: { readonly done: number; readonly total: number; readonly label: string | null };
  /** Phase 1 with a plan, phase 2: the wall time left at the rate so far, ms (absent until known). */
  readonly etaMs?: number;
  /** Phase 2: op records replayed of total. */
  readonly done?: number;
  readonly total?: number;
  /** Reference: the check whose host reference is computed, its position (from 0) and count, and how far it got (0 to 1). */
  readonly reference?: {
    readonly check: string;
    readonly index: number;
    readonly count: number;
    readonly fraction: number;
  };
}

/** Worker -> page: the run finished (a failed verification is a finished run with `passed: false`). */
export interface RunDoneMessage {
  readonly type: "done";
  readonly id: number;
  /** The results JSON exactly as `kb run --json` prints it (for the download and comparison). */
  readonly resultsJson: string;
  readonly results: RunResults;
  readonly passed: boolean;
  /** The Chrome trace JSON text when `trace` was asked, else null. */
  readonly trace: string | null;
  /** The op log as JSON lines when `opLog` was asked, else null. */
  readonly opLog: string | null;
  /** Wall times, ms (shown, never part of the results). */
  readonly wall: { readonly totalMs: number; readonly phase1Ms: number; readonly phase2Ms: number };
}

/** Worker -> page: the run stopped with an error. */
export interface RunErrorMessage {
  readonly type: "error";
  readonly id: number;
  /** The KbError code (`KERNEL_FAILED`, `TOPOLOGY_INVALID`, `RUN_LIMIT`...) or `TRANSPILE` / `INTERNAL`. */
  readonly code: string;
  /** The message as `kb run` prints it. */
  readonly message: string;
  /** Where, when known: the kernel's line in the bench, the topology's line. */
  readonly location: SourceLocation | null;
}

export type PageToWorker = RunRequest;
export type WorkerToPage = RunProgressMessage | RunDoneMessage | RunErrorMessage;

/** The page's fields of the run limits, as a `RUN_LIMIT` message names them (`RunLimits.names`). */
export const LIMIT_FIELDS = { maxEvents: "Max events", maxSimTimeNs: "Max sim time" } as const;
