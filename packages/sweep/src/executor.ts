import type { PointInputs } from "./points.js";

/**
 * One point to run, as it crosses to an executor: names, params and digests, never code. The
 * executor's side finds the bench and plug-ins itself (a worker refuses a bench whose digest
 * differs, DESIGN §10).
 */
export interface SweepJob {
  /** The point's position in the design. */
  readonly point: number;
  /** Its key ({@link pointKey}). */
  readonly key: string;
  /** The bench as the spec names it (a name or a path from `cwd`). */
  readonly bench: string;
  /** sha256 of the bench file the sweep planned with. */
  readonly benchDigest: string;
  readonly inputs: PointInputs;
  /** Run options: verify, limits, the results cache folder. */
  readonly run: SweepJobRun;
}

/** How each point runs (the spec's `run:` and `kb sweep`'s options). */
export interface SweepJobRun {
  readonly verify: boolean;
  readonly maxEvents?: number | undefined;
  readonly maxSimTimeNs?: number | undefined;
  /** `kb run --max-stall-calls`: tl calls in a row without progress before the point stops. */
  readonly maxStallCalls?: number | undefined;
  /** Heap limit of the point's process, MB. */
  readonly memoryMb: number;
  /** Wall time after which the point is stopped and recorded as failed, s. */
  readonly timeoutS?: number | undefined;
  /** Folder of cached results by manifest digest (`kb run --cache`). */
  readonly cacheDir?: string | undefined;
}

/** What became of a job. */
export type JobOutcome =
  | { readonly status: "ok"; readonly results: unknown }
  | {
      readonly status: "failed";
      readonly reason: string;
      readonly results?: unknown;
      /**
       * True when a signal from outside stopped the point's process (SIGINT, SIGTERM, SIGHUP; or
       * kb run exited 130 / 143 after catching one): a terminal's Ctrl-C or a scheduler's SIGTERM
       * reaching the whole process group, not the point's own failure. A worker gives such a
       * point back to the queue.
       */
      readonly stopped?: true;
    };

/** An executor's report. */
export type ExecutorEvent =
  | { readonly type: "started"; readonly job: SweepJob }
  | { readonly type: "finished"; readonly job: SweepJob; readonly outcome: JobOutcome };

/**
 * Where a sweep's points run: a local process pool (`@kb/sweep/node`'s `LocalProcessPool`), or a
 * queue that workers on other machines take jobs from. The sweep submits every pending point,
 * then waits for a `finished` event per point; the executor decides how many run at once, and
 * must report each submitted job exactly once as finished (a crash of the point's process is an
 * outcome, `failed`, never a lost job).
 */
export interface Executor {
  /** How many points run at once (for the ETA). */
  readonly concurrency: number;
  /** Queues a job; it starts when a slot is free. */
  submit(job: SweepJob): void;
  /** Calls `listener` for every started and finished job from now on. */
  onEvent(listener: (event: ExecutorEvent) => void): void;
  /** Stops: running points are killed (not recorded), queued ones dropped. */
  close(): Promise<void>;
}
