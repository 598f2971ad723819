import { KbError } from "@kb/errors";
import { Job, Queue, QueueEvents } from "bullmq";
import type { Executor, ExecutorEvent, JobOutcome, SweepJob } from "../../executor.js";
import { REDIS_GIVE_UP_S } from "../../lost-worker.js";
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
import { type QueuedJob, queuedJob } from "./job-files.js";
import { type RedisWatch, watchRedis } from "./redis-watch.js";

/** Options of {@link RedisExecutor.open}. */
export interface RedisExecutorOptions {
  /** `redis://[user:password@]host[:port][/db]`, or `rediss://` for TLS. */
  readonly url: string;
  /** The BullMQ queue; the workers take the same name ({@link queueNameOf} of the spec's name by default). */
  readonly queue: string;
  /** The sweep's folder: relative plug-in paths are read from it for their digests. */
  readonly root: string;
  /** The @kb package versions the sweep's `kb run` would use, sent with each job ({@link QueuedJob.versions}). */
  readonly versions: Readonly<Record<string, string>>;
  /** Reported as `concurrency` (for the progress line): how many points the workers run at once, if known (default 1). */
  readonly concurrency?: number;
  /**
   * How often the queued jobs are compared with the queue, ms (default {@link LOST_CHECK_MS}): a
   * job Redis no longer has (a restart without its data) is queued again, one that finished
   * without its event reaching the sweep (the event stream is capped) is recorded.
   */
  readonly lostCheckMs?: number;
  /** Give up once Redis has not answered this long, ms ({@link RedisExecutor.gaveUp}); 0 waits for ever. Default {@link REDIS_GIVE_UP_S} s. */
  readonly giveUpMs?: number;
  /** Told (redacted) of lost jobs queued again and of Redis going away and coming back: log lines. */
  readonly onNotice?: (line: string) => void;
}

/** How often a sweep compares its queued jobs with the queue by default, ms. */
export const LOST_CHECK_MS = 10_000;
/** Jobs whose state is asked at once by the check. */
const CHECK_BATCH = 200;

/** The queue of a sweep named `name` when none is given: `kb-sweep-NAME` (BullMQ forbids `:` in it). */
export function queueNameOf(name: string): string {
  return `kb-sweep-${name.replace(/[^A-Za-z0-9._-]/g, "-")}`;
}

/**
 * How long a finished job nobody recorded (its sweep was interrupted) stays on Redis for the sweep
 * run again to take, s. Recorded jobs are removed at once.
 */
export const KEEP_UNRECORDED_S = 7 * 24 * 3600;

/**
 * Events kept in the queue's event stream (BullMQ's default is 10 000). A completion event
 * carries the point's results JSON (tens of KB), so fewer keep Redis small; the sweep reads them
 * as they come.
 */
const EVENTS_KEPT = 1000;

/** A job that a sweep gets back: what the worker returned, a point's outcome. */
function isOutcome(value: unknown): value is JobOutcome {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
  const { status, reason } = value as { status?: unknown; reason?: unknown };
  // Anyone who can write to Redis can finish a job: a failure's reason must be text to print.
  return status === "ok" || (status === "failed" && typeof reason === "string");
}

/**
 * An executor whose points run on `kb worker`s anywhere that reach the same Redis: each job is a
 * BullMQ job on the sweep's queue, with id `KEY-ATTEMPT` (a sweep-side retry is a new job, and a
 * sweep run again after a crash finds its jobs still queued rather than adding them twice). Start
 * and finish events come back through BullMQ's queue events; a finished job is reported once per
 * submit however often BullMQ reports it, then removed from Redis. A finished job nobody recorded
 * (the sweep was stopped while a worker ran it) stays on Redis for {@link KEEP_UNRECORDED_S}, and
 * the sweep run again takes its outcome instead of running the point again. A job whose worker
 * died is taken by another worker (BullMQ's stalled-job check); one lost more often than the
 * workers' limit finishes `failed`. `close()` removes the jobs still queued (no worker took them).
 */
export class RedisExecutor implements Executor {
  readonly concurrency: number;
  readonly target: RedisTarget;
  readonly #queue: Queue;
  readonly #events: QueueEvents;
  readonly #root: string;
  readonly #versions: Readonly<Record<string, string>>;
  readonly #listeners: ((event: ExecutorEvent) => void)[] = [];
  /** Job id -> the job, while it is not finished. */
  readonly #pending = new Map<string, SweepJob>();
  /** Job id -> its data, once added to the queue and while not finished: what the check looks for. */
  readonly #queued = new Map<string, QueuedJob>();
  readonly #watch: RedisWatch;
  readonly #timer: NodeJS.Timeout;
  readonly #onNotice: (line: string) => void;
  /** The check in flight, if any. */
  #checking: Promise<void> | null = null;
  /** Submits of each key so far (a job id's attempt part). */
  readonly #attempts = new Map<string, number>();
  #closed = false;
  /** Adds and removals in flight, so close() waits for them. */
  #adding: Promise<unknown> = Promise.resolve();

  private constructor(target: RedisTarget, options: RedisExecutorOptions, queue: Queue, events: QueueEvents) {
    this.target = target;
    this.#onNotice = options.onNotice ?? (() => {});
    this.#watch = watchRedis({
      target,
      who: "kb sweep",
      giveUpMs: options.giveUpMs ?? REDIS_GIVE_UP_S * 1000,
      onLine: this.#onNotice,
    });
    this.#timer = setInterval(() => {
      if (this.#closed || this.#checking !== null) return;
      this.#checking = this.#check().finally(() => (this.#checking = null));
    }, options.lostCheckMs ?? LOST_CHECK_MS);
    this.#timer.unref();
    this.concurrency = Math.max(1, Math.floor(options.concurrency ?? 1));
    this.#root = options.root;
    this.#versions = options.versions;
    this.#queue = queue;
    this.#events = events;
    events.on("active", ({ jobId }) => this.#started(jobId));
    events.on("completed", ({ jobId, returnvalue }) => this.#finished(jobId, outcomeOf(returnvalue)));
    events.on("failed", ({ jobId, failedReason }) =>
      this.#finished(jobId, failedOutcome(failedReason, target)),
    );
    // Connection trouble is retried by ioredis; its messages may name the URL.
    events.on("error", () => {});
    queue.on("error", () => {});
  }

  /**
   * Connects (a bad URL or an unreachable server is a `SWEEP_QUEUE` error within seconds, never a
   * hang) and listens to the queue's events before any job is added.
   */
  static async open(options: RedisExecutorOptions): Promise<RedisExecutor> {
    const target = parseRedisUrl(options.url);
    checkQueueName(options.queue);
    await checkRedis(target);
    const queue = new Queue(options.queue, {
      connection: target.options,
      streams: { events: { maxLen: EVENTS_KEPT } },
    });
    const events = new QueueEvents(options.queue, { connection: target.options });
    try {
      await Promise.all([queue.waitUntilReady(), events.waitUntilReady()]);
    } catch (error) {
      await Promise.allSettled([queue.close(), events.close()]);
      throw new KbError(
        "SWEEP_QUEUE",
        `Redis at ${target.where}: ${redactText(error instanceof Error ? error.message : String(error), target)}`,
      );
    }
    return new RedisExecutor(target, options, queue, events);
  }

  /** The queue's name. */
  get queueName(): string {
    return this.#queue.name;
  }

  /**
   * Settles once every job submitted so far is on Redis (or failed to get there: its row says
   * so), so that a "queued" message is true when printed.
   */
  async whenQueued(): Promise<void> {
    for (;;) {
      const adding = this.#adding;
      await adding;
      if (adding === this.#adding) return;
    }
  }

  submit(job: SweepJob): void {
    if (this.#closed) return;
    const attempt = (this.#attempts.get(job.key) ?? 0) + 1;
    this.#attempts.set(job.key, attempt);
    const id = `${job.key}-${attempt}`;
    this.#pending.set(id, job);
    // The job's plug-in digests are read first (hashing is asynchronous); closed meanwhile, it is not added.
    const queuing = queuedJob(job, this.#root, this.#versions).then(
      (data) => {
        if (!this.#closed) this.#add(id, data);
      },
      (error: unknown) => {
        // A file no worker would read (outside the sweep's folder): the point's row says so.
        const reason = error instanceof Error ? error.message : String(error);
        this.#finished(id, { status: "failed", reason });
      },
    );
    this.#adding = Promise.all([this.#adding, queuing]);
  }

  /** Adds job `id` to the queue (again, for a lost one), then takes its outcome if it finished before. */
  #add(id: string, data: QueuedJob): void {
    const adding = this.#queue
      .add(`point-${data.job.point}`, data, {
        jobId: id,
        // A worker's own failure (not a point's: that is an outcome) is final here; a sweep
        // retries failed points itself (run.retries) as new jobs.
        attempts: 1,
        // Removed by #finished once recorded; kept a while when nobody records them.
        removeOnComplete: { age: KEEP_UNRECORDED_S },
        removeOnFail: { age: KEEP_UNRECORDED_S },
      })
      .then(async () => {
        if (this.#pending.has(id)) this.#queued.set(id, data);
        // A job with this id that finished before this add (the sweep was stopped while a worker
        // ran it, and is run again) is not added again and reports nothing: ask for it once.
        await this.#recover(id);
      })
      .catch((error: unknown) =>
        this.#finished(id, {
          status: "failed",
          reason: `could not queue it on Redis at ${this.target.where}: ${redactText(String(error), this.target)}`,
        }),
      );
    this.#adding = Promise.all([this.#adding, adding]);
  }

  /**
   * Records job `id` if it has finished on the queue (its event missed or not sent), and gives its
   * state. The state first: a job read while active has no return value yet. Gone (undefined)
   * means recorded meanwhile through its event.
   */
  async #recover(id: string): Promise<string> {
    const state = await this.#queue.getJobState(id);
    if (state !== "completed" && state !== "failed") return state;
    const found = await Job.fromId<QueuedJob, unknown>(this.#queue, id);
    if (found === undefined) return state;
    if (state === "completed") this.#finished(id, outcomeOf(found.returnvalue));
    else this.#finished(id, failedOutcome(found.failedReason ?? "", this.target));
    return state;
  }

  /**
   * Compares the queued jobs with the queue: finished ones are recorded, and ones the queue no
   * longer has at all (Redis restarted without its data, or someone removed them) are queued
   * again, with one line saying how many. Skipped while Redis does not answer (the watch says so).
   */
  async #check(): Promise<void> {
    const lost: [string, QueuedJob][] = [];
    const ids = [...this.#queued.keys()];
    try {
      for (let start = 0; start < ids.length && !this.#closed; start += CHECK_BATCH) {
        await Promise.all(
          ids.slice(start, start + CHECK_BATCH).map(async (id) => {
            const state = await this.#recover(id);
            const data = this.#queued.get(id);
            if (state === "unknown" && data !== undefined && this.#pending.has(id)) lost.push([id, data]);
          }),
        );
      }
    } catch {
      return;
    }
    if (lost.length === 0 || this.#closed) return;
    const points = lost.map(([, data]) => data.job.point).sort((a, b) => a - b);
    const shown = points.length > 10 ? `${points.slice(0, 10).join(", ")}, ...` : points.join(", ");
    this.#onNotice(
      `${lost.length} queued point${lost.length === 1 ? " is" : "s are"} no longer on Redis at ${this.target.where} (restarted without its data?): queued again (point ${shown}).`,
    );
    for (const [id, data] of lost) {
      this.#queued.delete(id);
      this.#add(id, data);
    }
  }

  /** Resolves with a `SWEEP_QUEUE` error once Redis has not answered for `giveUpMs`: the sweep stops then. */
  get gaveUp(): Promise<KbError> {
    return this.#watch.gaveUp;
  }

  onEvent(listener: (event: ExecutorEvent) => void): void {
    this.#listeners.push(listener);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#timer);
    // A check in flight is not waited for: it may wait for a Redis that does not answer.
    const down = this.#watch.down();
    await this.#watch.stop();
    // Jobs still queued are removed, so that workers do not run points nobody waits for. Jobs a
    // worker holds cannot be (BullMQ keeps their lock): they finish unrecorded and stay on Redis
    // for the sweep run again (KEEP_UNRECORDED_S), as do finished ones not recorded yet. Not
    // waited for when Redis does not answer (its commands would wait for it for ever).
    const tidy = async () => {
      await this.#adding;
      await Promise.allSettled(
        [...this.#pending.keys()].map(async (id) => {
          const state = await this.#queue.getJobState(id);
          if (state === "waiting" || state === "prioritized" || state === "delayed")
            await this.#queue.remove(id);
        }),
      );
      await Promise.allSettled([this.#events.close(), this.#queue.close()]);
    };
    const tidied =
      !down &&
      (await withTimeout(tidy(), CONNECT_TIMEOUT_MS).then(
        () => true,
        () => false,
      ));
    if (!tidied) {
      await dropConnections([
        {
          close: () => this.#events.close(),
          clients: [this.#events.backend.client, this.#events.backend.blockingConnection?.client],
        },
        { close: () => this.#queue.close(), clients: [this.#queue.backend.client] },
      ]);
    }
  }

  #emit(event: ExecutorEvent): void {
    if (this.#closed) return;
    for (const listener of this.#listeners) listener(event);
  }

  #started(id: string): void {
    const job = this.#pending.get(id);
    if (job !== undefined) this.#emit({ type: "started", job });
  }

  #finished(id: string, outcome: JobOutcome): void {
    const job = this.#pending.get(id);
    // Finished already (BullMQ's event and the state asked after an add can both report it).
    if (job === undefined) return;
    this.#pending.delete(id);
    this.#queued.delete(id);
    this.#emit({ type: "finished", job, outcome });
    // Recorded: the job's results need not stay on Redis.
    this.#adding = Promise.all([this.#adding, this.#queue.remove(id).catch(() => 0)]);
  }
}

/** What a worker returned as a point's outcome. */
function outcomeOf(returnvalue: unknown): JobOutcome {
  return isOutcome(returnvalue)
    ? returnvalue
    : { status: "failed", reason: "the worker returned no outcome (another kb version?)" };
}

/** A BullMQ job failure (a worker never fails a job itself: its worker was lost too often). */
function failedOutcome(failedReason: string, target: RedisTarget): JobOutcome {
  return { status: "failed", reason: lostReason(redactText(failedReason, target)) };
}

/** A BullMQ failure as a point's reason: a job lost with its workers says so. */
function lostReason(failedReason: string): string {
  return /stalled more than allowable limit/i.test(failedReason)
    ? `its worker was lost while running it, more often than the workers' --max-lost allows (${failedReason})`
    : `the worker failed: ${failedReason}`;
}
