// The settings of a worker that dies mid-point, apart from the worker (node/redis/run-worker.ts) so that
// reading them (kb worker's --help) loads neither BullMQ nor ioredis. Re-exported by the main
// entry and by @kb/sweep/redis.

/**
 * How soon a lost worker's point runs elsewhere. A worker renews the lock of each job it runs
 * every `lockMs / 2`; when it dies, the lock lapses after `lockMs`, and the next stalled-job
 * check of any live worker (every `stalledCheckMs`) puts the job back in the queue: a lost point
 * waits at most about `lockMs + stalledCheckMs`. Smaller is faster but a worker whose event loop
 * stalls for `lockMs` (a swapping machine) loses its jobs to others for nothing.
 */
export interface LostWorkerSettings {
  /** Lock of a running job, ms (BullMQ `lockDuration`; default 15000). */
  readonly lockMs?: number;
  /** Interval of the stalled-job check, ms (BullMQ `stalledInterval`; default 5000). */
  readonly stalledCheckMs?: number;
  /** Times a job may lose its worker and run again before it fails (BullMQ `maxStalledCount`; default 2). */
  readonly maxLost?: number;
}

/** Defaults of {@link LostWorkerSettings}. */
export const LOST_WORKER_DEFAULTS = { lockMs: 15_000, stalledCheckMs: 5_000, maxLost: 2 } as const;

/**
 * How long a sweep or a worker waits for a Redis that does not answer before it gives up with a
 * `SWEEP_QUEUE` error (exit 1), by default, s (`--give-up-s`; 0 waits for ever). Meanwhile it
 * reconnects, at most {@link RECONNECT_CAP_MS} apart, and says so once a minute.
 */
export const REDIS_GIVE_UP_S = 300;

/** The longest wait between two attempts to reconnect to Redis, ms. */
export const RECONNECT_CAP_MS = 5000;
