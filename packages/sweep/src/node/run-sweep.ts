import { dirname, resolve } from "node:path";
import { benchFileDigest, pluginSourceDigest } from "@kb/runtime/node";
import type { Executor, JobOutcome, SweepJob, SweepJobRun } from "../executor.js";
import { planSweep, pointKey, type SweepPlan, type SweepPoint } from "../points.js";
import type { SweepSpec } from "../spec.js";
import { metricsOf, type SweepRow } from "../table.js";
import { OutLock } from "./out-lock.js";
import { ResultsTable } from "./results-files.js";
import { readTopologyInput } from "./spec-file.js";

/** Options of {@link runSweep}. */
export interface RunSweepOptions {
  readonly spec: SweepSpec;
  /** The bench file the spec names, resolved (it and the files it imports give the points' keys). */
  readonly benchFile: string;
  /** The base topology file the spec names, resolved. */
  readonly topologyFile: string;
  /** The results folder: results.jsonl and results.csv. */
  readonly outDir: string;
  readonly executor: Executor;
  /**
   * The folder the points' plug-in paths are relative to (the spec's folder; default the current
   * directory): their code's digests enter the points' keys.
   */
  readonly pluginRoot?: string | undefined;
  /** Passed to each point: a folder of results cached by manifest digest. */
  readonly cacheDir?: string | undefined;
  /** Run the points whose rows say failed again (their rows are replaced). */
  readonly retryFailed?: boolean | undefined;
  /** Aborting stops the sweep: running points are killed and not recorded. */
  readonly signal?: AbortSignal | undefined;
  readonly onProgress?: ((progress: SweepProgress) => void) | undefined;
  /** Hears what the sweep did that the user should know (a stale lock of `outDir` taken over). */
  readonly onWarning?: ((message: string) => void) | undefined;
}

/** What a sweep reports as it goes. */
export type SweepProgress =
  | {
      readonly type: "planned";
      /** Points of the design that run (after constraints and duplicates). */
      readonly total: number;
      /** Points already in the table (not run again). */
      readonly resumed: number;
      readonly skipped: number;
      readonly duplicates: number;
      readonly concurrency: number;
    }
  | { readonly type: "started"; readonly point: SweepPoint }
  /** A point failed and is run again (`run.retries`); `attempt` runs failed so far. */
  | {
      readonly type: "retrying";
      readonly point: SweepPoint;
      readonly reason: string;
      readonly attempt: number;
    }
  | {
      readonly type: "finished";
      readonly row: SweepRow;
      /** Rows in the table now, of `total`. */
      readonly done: number;
      readonly total: number;
      /** Points finished by this call (not resumed), for an ETA. */
      readonly ran: number;
      readonly pending: number;
    };

/** How a sweep ended. */
export interface SweepSummary {
  readonly total: number;
  readonly resumed: number;
  readonly ran: number;
  readonly ok: number;
  readonly failed: number;
  readonly skipped: number;
  readonly duplicates: number;
  readonly interrupted: boolean;
}

/**
 * Runs a sweep: plans its points, takes the lock of `outDir` ({@link OutLock}: a second sweep on
 * it is a `SWEEP_OUTPUT` error naming the holder's pid), opens its results table (resuming: a
 * point whose key already has a row is not run again), submits the rest to the executor and
 * appends a row per finished point, in the order they finish. Resolves when every point has a
 * row, or when `signal` aborts; rejects with a `SWEEP_OUTPUT` error when the table cannot be
 * written (running points are stopped, the rows written stay whole). The lock is released on
 * every way out.
 */
export async function runSweep(options: RunSweepOptions): Promise<SweepSummary> {
  let plan: SweepPlan;
  let keyed: { readonly point: SweepPoint; readonly key: string }[];
  let benchDigest: string;
  let lock: OutLock;
  try {
    plan = planSweep(options.spec, readTopologyInput(options.topologyFile));
    benchDigest = await benchFileDigest(options.benchFile);
    const digest = benchDigest;
    const code = pluginCode(options);
    keyed = await Promise.all(
      plan.points.map(async (point) => ({
        point,
        key: await pointKey(digest, point.inputs, await code(point)),
      })),
    );
    lock = OutLock.acquire(options.outDir, options.onWarning);
  } catch (error) {
    // Nothing ran: the executor (a Redis connection) must not keep the process alive.
    await options.executor.close();
    throw error;
  }
  try {
    return await runPoints(options, plan, keyed, benchDigest);
  } finally {
    lock.release();
  }
}

/**
 * The digests of a point's plug-ins' code, by entry (its own and its topology's), resolved as its
 * `kb run` resolves them: paths from the spec's folder (the topology's are absolute already),
 * package names from the topology's folder, then the spec's. One digest per entry per sweep.
 */
function pluginCode(options: RunSweepOptions): (point: SweepPoint) => Promise<Record<string, string | null>> {
  const root = resolve(options.pluginRoot ?? process.cwd());
  const from = [dirname(resolve(options.topologyFile)), root];
  const digests = new Map<string, Promise<string | null>>();
  return async (point) => {
    const listed = (point.inputs.topology as { plugins?: unknown }).plugins;
    const entries = [
      ...(Array.isArray(listed) ? listed.filter((each): each is string => typeof each === "string") : []),
      ...point.inputs.plugins,
    ];
    const code: Record<string, string | null> = {};
    for (const entry of entries) {
      let digest = digests.get(entry);
      if (digest === undefined) {
        digest = pluginSourceDigest(entry, from, root);
        digests.set(entry, digest);
      }
      code[entry] = await digest;
    }
    return code;
  };
}

/** The points of a planned sweep run into its table (the folder's lock held). */
async function runPoints(
  options: RunSweepOptions,
  plan: SweepPlan,
  keyed: readonly { readonly point: SweepPoint; readonly key: string }[],
  benchDigest: string,
): Promise<SweepSummary> {
  const { spec, executor } = options;
  let table: ResultsTable;
  try {
    table = ResultsTable.open(options.outDir, Object.keys(spec.axes), Object.keys(spec.metrics), {
      retryFailed: options.retryFailed ?? false,
    });
  } catch (error) {
    await executor.close();
    throw error;
  }
  const pending = keyed.filter(({ key }) => table.row(key) === undefined);
  const keys = new Set(keyed.map(({ key }) => key));
  const resumed = keyed.length - pending.length;
  options.onProgress?.({
    type: "planned",
    total: keyed.length,
    resumed,
    skipped: plan.skipped.length,
    duplicates: plan.duplicates,
    concurrency: executor.concurrency,
  });
  const run: SweepJobRun = {
    verify: spec.run.verify,
    maxEvents: spec.run.maxEvents,
    maxSimTimeNs: spec.run.maxSimTimeNs,
    maxStallCalls: spec.run.maxStallCalls,
    memoryMb: spec.run.memoryMb,
    timeoutS: spec.run.timeoutS,
    cacheDir: options.cacheDir,
  };
  const points = new Map(pending.map(({ point, key }) => [key, point]));
  /** Runs of each point so far (a failed one is run again up to spec.run.retries times). */
  const attempts = new Map<string, number>();
  let ran = 0;
  const summary = (interrupted: boolean): SweepSummary => {
    const rows = table.rows().filter((row) => keys.has(row.key));
    return {
      total: keyed.length,
      resumed,
      ran,
      ok: rows.filter((row) => row.status === "ok").length,
      failed: rows.filter((row) => row.status === "failed").length,
      skipped: plan.skipped.length,
      duplicates: plan.duplicates,
      interrupted,
    };
  };
  if (pending.length === 0) return summary(false);
  return new Promise<SweepSummary>((resolve, reject) => {
    let settled = false;
    /** Ends the sweep: with its summary, or with `error` (an output that failed). */
    const finish = (interrupted: boolean, error?: unknown) => {
      if (settled) return;
      settled = true;
      options.signal?.removeEventListener("abort", onAbort);
      void executor.close().then(() => (error === undefined ? resolve(summary(interrupted)) : reject(error)));
    };
    const onAbort = () => finish(true);
    options.signal?.addEventListener("abort", onAbort);
    executor.onEvent((event) => {
      if (settled) return;
      const point = points.get(event.job.key);
      if (point === undefined) return;
      if (event.type === "started") {
        options.onProgress?.({ type: "started", point });
        return;
      }
      const outcome = checkedOutcome(event.job, event.outcome);
      const tries = (attempts.get(event.job.key) ?? 0) + 1;
      attempts.set(event.job.key, tries);
      if (outcome.status === "failed" && tries <= spec.run.retries) {
        options.onProgress?.({ type: "retrying", point, reason: outcome.reason, attempt: tries });
        executor.submit(event.job);
        return;
      }
      const row = rowOf(point, event.job.key, outcome, spec.metrics);
      try {
        table.append(row);
      } catch (error) {
        // The table could not be written (a full disk): the sweep's failure, not the point's.
        finish(true, error);
        return;
      }
      points.delete(event.job.key);
      ran++;
      options.onProgress?.({
        type: "finished",
        row,
        done: table.rows().filter((each) => keys.has(each.key)).length,
        total: keyed.length,
        ran,
        pending: points.size,
      });
      if (points.size === 0) finish(false);
    });
    if (options.signal?.aborted === true) {
      finish(true);
      return;
    }
    for (const { point, key } of pending) {
      const job: SweepJob = {
        point: point.index,
        key,
        bench: spec.bench,
        benchDigest,
        inputs: point.inputs,
        run,
      };
      executor.submit(job);
    }
  });
}

/**
 * The outcome, unless its run used another bench file than the sweep planned with (edited during
 * the sweep, or a worker with another copy): that point is failed, its results not the point's.
 */
function checkedOutcome(job: SweepJob, outcome: JobOutcome): JobOutcome {
  const ran = (outcome.results as { manifest?: { bench?: { digest?: unknown } } } | undefined)?.manifest
    ?.bench?.digest;
  if (outcome.status !== "ok" || typeof ran !== "string" || ran === job.benchDigest) return outcome;
  return {
    status: "failed",
    reason: `the bench file changed during the sweep (it ran ${ran.slice(0, 12)}, the sweep planned ${job.benchDigest.slice(0, 12)}): run the sweep again`,
  };
}

function rowOf(
  point: SweepPoint,
  key: string,
  outcome: JobOutcome,
  metrics: Readonly<Record<string, string>>,
): SweepRow {
  const results = outcome.results;
  const digest = (results as { manifest?: { digest?: unknown } } | undefined)?.manifest?.digest;
  return {
    point: point.index,
    key,
    status: outcome.status,
    reason: outcome.status === "failed" ? outcome.reason : null,
    digest: typeof digest === "string" ? digest : null,
    values: point.values,
    metrics:
      results === undefined
        ? Object.fromEntries(Object.keys(metrics).map((name) => [name, null]))
        : metricsOf(results, metrics),
  };
}
