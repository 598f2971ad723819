import { KbError } from "@kb/errors";
import { type Job, Queue, WaitingError, Worker } from "bullmq";
import type { JobOutcome } from "../../executor.js";
import { LOST_WORKER_DEFAULTS, type LostWorkerSettings, REDIS_GIVE_UP_S } from "../../lost-worker.js";
import {
  CONNECT_TIMEOUT_MS,
  checkQueueName,
  checkRedis,
  dropConnections,
  parseRedisUrl,
  type RedisTarget,
  redactText,
  withTimeout,
} from "./connection.js";
import { type IdleWatch, UNFINISHED_STATES, type WorkerIdle, watchIdle } from "./idle-watch.js";
import { checkQueuedJob, type QueuedJob } from "./job-schema.js";
import { watchRedis } from "./redis-watch.js";

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
  /**
   * Once Redis has not answered for this long, ms, {@link RunningWorker.gaveUp} resolves (the
   * worker reconnects meanwhile, saying so through `onError`); 0 waits for ever. Default
   * {@link REDIS_GIVE_UP_S} s.
   */
  readonly giveUpMs?: number | undefined;
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
  /**
   * Resolves with a `SWEEP_QUEUE` error once Redis has not answered for `giveUpMs`; the caller
   * then closes the worker (`close(true)`, which does not wait for Redis) and exits non-zero.
   */
  readonly gaveUp: Promise<KbError>;
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
  checkQueueName(options.queue);
  await checkRedis(target);
  // Connection trouble is told by the watch; the same message of BullMQ at most once a minute.
  const onError = options.onError === undefined ? undefined : onceAWhile(options.onError);
  const settings = { ...LOST_WORKER_DEFAULTS, ...definedOf(options) };
  /** Jobs running here, with the token that holds their lock, to give back on a forced close. */
  const active = new Map<Job<unknown, JobOutcome>, string>();
  /** Jobs in the processor now, and when one last started or ended (for idleExitMs). */
  let running = 0;
  let lastActivityAt = performance.now();
  const redis = watchRedis({
    target,
    who: "kb worker",
    giveUpMs: options.giveUpMs ?? REDIS_GIVE_UP_S * 1000,
    onLine: (line) => options.onError?.(line),
  });
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
  worker.on("error", (error) => {
    // Connection trouble is the watch's to tell, once and rate-limited.
    if (!redis.down() && !isConnectionError(error)) onError?.(redactText(error.message, target));
  });
  // The queue's counts, on the same connection options, only to tell when it is idle.
  const counts =
    idleExitMs === undefined ? undefined : new Queue(options.queue, { connection: target.options });
  counts?.on("error", () => {});
  try {
    await Promise.all([worker.waitUntilReady(), counts?.waitUntilReady()]);
  } catch (error) {
    await Promise.allSettled([worker.close(true), counts?.close(), redis.stop()]);
    throw new KbError(
      "SWEEP_QUEUE",
      `Redis at ${target.where}: ${redactText(error instanceof Error ? error.message : String(error), target)}`,
    );
  }
  void worker.run().catch((error: unknown) => onError?.(redactText(String(error), target)));
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
    gaveUp: redis.gaveUp,
    close: async (force) => {
      await watch?.stop();
      const down = redis.down();
      await redis.stop();
      const drop = () =>
        dropConnections([
          {
            close: () => worker.close(true),
            clients: [worker.backend.client, worker.backend.blockingConnection?.client],
          },
          ...(counts === undefined
            ? []
            : [{ close: () => counts.close(), clients: [counts.backend.client] }]),
        ]);
      // Nothing to hand back to or wait for: its jobs come back to the queue when their locks
      // lapse, if Redis kept them.
      if (down) return void (await drop());
      const closing = (async () => {
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
      })();
      // A forced close does not wait for a Redis that stopped answering (its commands would wait for ever).
      if (!force) return closing;
      await withTimeout(closing, CONNECT_TIMEOUT_MS).catch(drop);
    },
  };
}

/** An error of the connection to Redis (refused, reset, closed), not of a command. */
function isConnectionError(error: Error): boolean {
  const code = (error as { code?: unknown }).code;
  return (
    (typeof code === "string" &&
      /^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|ENOTFOUND|EHOSTUNREACH|ENETUNREACH)$/.test(code)) ||
    /Connection is closed|Stream isn't writeable/i.test(error.message)
  );
}

/** `print`, but the same text at most once a minute. */
function onceAWhile(print: (text: string) => void): (text: string) => void {
  const printedAt = new Map<string, number>();
  return (text) => {
    const now = performance.now();
    const last = printedAt.get(text);
    if (last !== undefined && now - last < 60_000) return;
    printedAt.set(text, now);
    print(text);
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
