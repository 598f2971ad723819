import { KbError } from "@kb/errors";
import { type Job, Queue, WaitingError, Worker } from "bullmq";
import type { JobOutcome } from "../../executor.js";
import { LOST_WORKER_DEFAULTS, type LostWorkerSettings } from "../../lost-worker.js";
import { checkRedis, parseRedisUrl, type RedisTarget, redactText } from "./connection.js";
import { type IdleWatch, UNFINISHED_STATES, type WorkerIdle, watchIdle } from "./idle-watch.js";
import { checkQueuedJob, type QueuedJob } from "./job-schema.js";

/** Options of {@link runWorker}. */
export interface RunWorkerOptions extends LostWorkerSettings {
  /** `redis://[user:password@]host[:port][/db]`, or `rediss://` for TLS. */
  readonly url: string;
  readonly queue: string;
  /** Points at once. */
  readonly concurrency: number;
  /**
   * Runs one job, checked already (`checkQueuedJob`: a job of another shape is refused without
   * calling it), (in its own process, with the worker's own bench and plug-ins, refusing ones
   * whose digests differ) and gives its outcome; a failed point is an outcome, not a throw.
   * `null` gives the job back to the queue unrecorded, for any worker to run again (its process
   * was stopped from outside, as when the worker itself is being stopped).
   */
  readonly runJob: (queued: QueuedJob) => Promise<JobOutcome | null>;
  /** Told when a job starts and ends (log lines), passwords already redacted. */
  readonly onJob?: ((event: WorkerJobEvent) => void) | undefined;
  /** Told of connection trouble, redacted. */
  readonly onError?: ((message: string) => void) | undefined;
  /**
   * Resolve {@link RunningWorker.idle} once, for this many ms in a row, the worker has run nothing
   * and the queue has held no job waiting, delayed, prioritized or active on any worker (an active
   * job may come back if its worker dies). Checked every second, or every quarter of it if less.
   * Without it the worker runs until closed.
   */
  readonly idleExitMs?: number | undefined;
}

/** A worker's log event. */
export type WorkerJobEvent =
  | { readonly type: "refused"; readonly jobId: string; readonly reason: string }
  | { readonly type: "started"; readonly queued: QueuedJob }
  | { readonly type: "given back"; readonly queued: QueuedJob }
  | { readonly type: "finished"; readonly queued: QueuedJob; readonly outcome: JobOutcome };

/** A running worker. */
export interface RunningWorker {
  readonly target: RedisTarget;
  /**
   * Stops taking jobs. `force: false` waits for the running points to finish and report;
   * `force: true` gives them back to the queue at once for another worker (their processes are
   * the caller's to stop; a job it cannot give back goes to another worker once its lock lapses).
   */
  close(force: boolean): Promise<void>;
  /**
   * With `idleExitMs`: resolves when the worker decided that its sweep has no more work for it
   * (it checks no more); the caller then closes it, normally (`close(false)`: a job taken in the
   * meantime still runs and reports). Never resolves without `idleExitMs` or after `close`.
   */
  readonly idle: Promise<WorkerIdle>;
}

/**
 * Takes jobs of a sweep's queue, `concurrency` at a time, and returns each one's outcome (the
 * point's results JSON, or failed with a reason) as the BullMQ job's return value. A bad URL or an
 * unreachable Redis is a `SWEEP_QUEUE` error within seconds.
 */
export async function runWorker(options: RunWorkerOptions): Promise<RunningWorker> {
  const { idleExitMs } = options;
  if (idleExitMs !== undefined && !(Number.isFinite(idleExitMs) && idleExitMs > 0)) {
    throw new KbError(
      "SWEEP_QUEUE",
      `runWorker: idleExitMs must be a number of ms > 0, such as 60000; got ${idleExitMs}. Leave it out to run until closed.`,
    );
  }
  const target = parseRedisUrl(options.url);
  await checkRedis(target);
  const settings = { ...LOST_WORKER_DEFAULTS, ...definedOf(options) };
  /** Jobs running here, with the token that holds their lock, to give back on a forced close. */
  const active = new Map<Job<unknown, JobOutcome>, string>();
  /** Jobs in the processor now, and when one last started or ended (for idleExitMs). */
  let running = 0;
  let lastActivityAt = performance.now();
  const worker = new Worker<unknown, JobOutcome>(
    options.queue,
    async (job: Job<unknown, JobOutcome>, token?: string) => {
      // Anyone who can write to Redis can add a job: checked before anything is read or run.
      const checked = checkQueuedJob(job.data, job.id ?? "");
      if ("refusal" in checked) {
        options.onJob?.({ type: "refused", jobId: job.id ?? "", reason: checked.refusal });
        return { status: "failed", reason: checked.refusal };
      }
      const { queued } = checked;
      running++;
      lastActivityAt = performance.now();
      if (token !== undefined) active.set(job, token);
      options.onJob?.({ type: "started", queued });
      let outcome: JobOutcome | null;
      try {
        outcome = await options.runJob(queued);
      } catch (error) {
        outcome = { status: "failed", reason: error instanceof Error ? error.message : String(error) };
      } finally {
        active.delete(job);
        running--;
        lastActivityAt = performance.now();
      }
      if (outcome === null) {
        options.onJob?.({ type: "given back", queued });
        // Back in the queue, then BullMQ's way of saying "moved, not failed". A forced close may
        // have moved it already.
        if (token !== undefined) await job.moveToWait(token).catch(() => {});
        throw new WaitingError();
      }
      if (outcome.status === "failed") outcome = { ...outcome, reason: redactText(outcome.reason, target) };
      options.onJob?.({ type: "finished", queued, outcome });
      return outcome;
    },
    {
      connection: target.options,
      concurrency: Math.max(1, Math.floor(options.concurrency)),
      lockDuration: settings.lockMs,
      stalledInterval: settings.stalledCheckMs,
      maxStalledCount: settings.maxLost,
      autorun: false,
    },
  );
  worker.on("error", (error) => options.onError?.(redactText(error.message, target)));
  // The queue's counts, on the same connection options, only to tell when it is idle.
  const counts =
    idleExitMs === undefined ? undefined : new Queue(options.queue, { connection: target.options });
  counts?.on("error", (error) => options.onError?.(redactText(error.message, target)));
  try {
    await Promise.all([worker.waitUntilReady(), counts?.waitUntilReady()]);
  } catch (error) {
    await Promise.allSettled([worker.close(true), counts?.close()]);
    throw new KbError(
      "SWEEP_QUEUE",
      `Redis at ${target.where}: ${redactText(error instanceof Error ? error.message : String(error), target)}`,
    );
  }
  void worker.run().catch((error: unknown) => options.onError?.(redactText(String(error), target)));
  const watch: IdleWatch | undefined =
    counts === undefined || idleExitMs === undefined
      ? undefined
      : watchIdle({
          idleExitMs,
          running: () => running,
          lastActivityAt: () => lastActivityAt,
          unfinished: () => counts.getJobCountByTypes(...UNFINISHED_STATES),
        });
  return {
    target,
    idle: watch?.idle ?? new Promise<WorkerIdle>(() => {}),
    close: async (force) => {
      await watch?.stop();
      if (force) {
        // Take no more, then hand the running jobs back (no stalled count: nothing was lost).
        await worker.pause(true);
        await Promise.allSettled([...active].map(([job, token]) => job.moveToWait(token)));
        active.clear();
      }
      try {
        await worker.close(force);
      } finally {
        await counts?.close();
      }
    },
  };
}

function definedOf(settings: LostWorkerSettings): Partial<LostWorkerSettings> {
  return Object.fromEntries(
    Object.entries({
      lockMs: settings.lockMs,
      stalledCheckMs: settings.stalledCheckMs,
      maxLost: settings.maxLost,
    }).filter(([, value]) => value !== undefined),
  );
}
