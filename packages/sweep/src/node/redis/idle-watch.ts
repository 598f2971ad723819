/**
 * States of a queue's jobs that mean its sweep may still have work for a worker: to be taken
 * (`waiting`, `delayed`, `prioritized`), or taken by some worker (`active`), which may come back to
 * the queue when that worker dies (the live workers' stalled-job check puts it back).
 */
export const UNFINISHED_STATES = ["waiting", "delayed", "prioritized", "active"] as const;

/** Why a worker with `idleExitMs` decided to stop. */
export interface WorkerIdle {
  /** How long it had run nothing while its queue held no unfinished job, ms (at least `idleExitMs`). */
  readonly idleMs: number;
}

/** What {@link watchIdle} watches. */
export interface IdleWatchOptions {
  /** Idle this long in a row, ms, and the watch resolves. */
  readonly idleExitMs: number;
  /** Jobs running in this worker now. */
  readonly running: () => number;
  /** `performance.now()` when a job last started or ended in this worker. */
  readonly lastActivityAt: () => number;
  /** Jobs of the queue in {@link UNFINISHED_STATES}, on any worker; a throw counts as not idle. */
  readonly unfinished: () => Promise<number>;
}

/** A running watch. */
export interface IdleWatch {
  /** Resolves once idle for `idleExitMs` in a row; stays pending after {@link stop}. */
  readonly idle: Promise<WorkerIdle>;
  /** Stops checking; resolves when a check in flight has ended. */
  stop(): Promise<void>;
}

/** How often the idle condition is checked: once a second, or a quarter of `idleExitMs` if that is less. */
export function idleCheckIntervalMs(idleExitMs: number): number {
  return Math.max(10, Math.min(1000, idleExitMs / 4));
}

/**
 * Checks, every {@link idleCheckIntervalMs}, whether the worker runs nothing and its queue holds
 * no unfinished job; resolves `idle` once both have held at every check for `idleExitMs` (and no
 * job started or ended in between). Wall-clock timers: this watches real processes, not a
 * simulation.
 */
export function watchIdle(options: IdleWatchOptions): IdleWatch {
  let resolveIdle: (idle: WorkerIdle) => void = () => {};
  const idle = new Promise<WorkerIdle>((resolve) => (resolveIdle = resolve));
  /** Since when both conditions held at every check, or null. */
  let idleSince: number | null = null;
  let stopped = false;
  let checking: Promise<void> | null = null;

  const check = async (): Promise<void> => {
    let unfinished: number;
    try {
      unfinished = options.running() > 0 ? 1 : await options.unfinished();
    } catch {
      // Redis not answering: whether work remains is unknown, so not idle.
      unfinished = 1;
    }
    const now = performance.now();
    if (stopped) return;
    if (unfinished > 0 || options.running() > 0) {
      idleSince = null;
      return;
    }
    idleSince = Math.max(idleSince ?? now, options.lastActivityAt());
    if (now - idleSince >= options.idleExitMs) {
      stopped = true;
      clearInterval(timer);
      resolveIdle({ idleMs: now - idleSince });
    }
  };
  const timer = setInterval(() => {
    if (stopped || checking !== null) return;
    checking = check().finally(() => (checking = null));
  }, idleCheckIntervalMs(options.idleExitMs));
  // The worker's connections keep the process alive, not this timer.
  timer.unref();

  return {
    idle,
    stop: async () => {
      stopped = true;
      clearInterval(timer);
      await checking;
    },
  };
}
