import { redisSkipReason, runRedisTests } from "@kb/tooling/node/redis";
import { Queue } from "bullmq";
import { describe, expect, it } from "vitest";
import type { JobOutcome } from "../../executor.js";
import { parseRedisUrl } from "./connection.js";
import type { QueuedJob } from "./job-schema.js";
import { type RunningWorker, type RunWorkerOptions, runWorker } from "./run-worker.js";
import { testQueued, useRedisServer } from "./test-server.js";

// runWorker's idleExitMs (`kb worker --idle-exit`) on a real redis-server: a worker says it is idle
// only once it has run nothing and the queue has held no waiting, delayed or active job for that
// long. Skipped without redis-server, except in CI.

if (!runRedisTests) console.warn(`runWorker idle tests skipped: ${redisSkipReason}`);

const queued = testQueued;

const OK: JobOutcome = { status: "ok", results: {} };

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/** Resolves when `check` is true (polled), or rejects after `ms`. */
async function until(check: () => boolean, ms = 10_000): Promise<void> {
  const deadline = performance.now() + ms;
  while (!check()) {
    if (performance.now() > deadline) throw new Error("timed out waiting");
    await sleep(20);
  }
}

/** `performance.now()` when `promise` resolves, null until then. */
function whenResolved(promise: Promise<unknown>): { at: number | null } {
  const seen: { at: number | null } = { at: null };
  void promise.then(() => (seen.at = performance.now()));
  return seen;
}

describe.skipIf(!runRedisTests)("runWorker with idleExitMs on redis-server", () => {
  const server = useRedisServer("idle");

  async function worker(
    queue: string,
    options: Pick<RunWorkerOptions, "runJob" | "idleExitMs">,
  ): Promise<RunningWorker> {
    const running = await runWorker({ url: server.url(), queue, concurrency: 1, ...options });
    server.closeLater(() => running.close(true));
    return running;
  }

  function rawQueue(queue: string): Queue {
    const raw = new Queue(queue, { connection: parseRedisUrl(server.url()).options });
    server.closeLater(() => raw.close());
    return raw;
  }

  it("is idle only once the queue has drained: not while a job is active on another worker, delayed, or waiting", async () => {
    const queue = server.queueName();
    const raw = rawQueue(queue);
    /** Points run after point 0, on either worker, and when the last one ended. */
    const ran: number[] = [];
    let lastEnded = 0;
    const run = async (job: QueuedJob): Promise<JobOutcome> => {
      ran.push(job.job.point);
      await sleep(50);
      lastEnded = performance.now();
      return OK;
    };
    // Another worker (no idleExitMs) holds point 0, as a worker in the middle of a long point.
    const held = deferred<JobOutcome>();
    let otherTook = false;
    const other = await worker(queue, {
      runJob: (job) => {
        if (job.job.point !== 0) return run(job);
        otherTook = true;
        return held.promise;
      },
    });
    await raw.add("p0", queued(0));
    await until(() => otherTook);

    const idler = await worker(queue, { idleExitMs: 300, runJob: run });
    const idled = whenResolved(idler.idle);
    // Four times idleExitMs with a job active elsewhere (its worker may die and give it back).
    await sleep(1200);
    expect(idled.at).toBeNull();

    // Point 0 ends there while point 1 is delayed for a second: still not idle until point 1 has run.
    await raw.add("p1", queued(1), { delay: 1000 });
    held.resolve(OK);
    await until(() => ran.includes(1), 5000);
    expect(idled.at).toBeNull();

    // A job waiting in a paused queue (no worker takes it): not idle either.
    await raw.pause();
    await raw.add("p2", queued(2));
    await sleep(1200);
    expect(ran).toEqual([1]);
    expect(idled.at).toBeNull();
    await raw.resume();
    await until(() => ran.includes(2), 5000);

    // Drained: idle after idleExitMs (checked every 75 ms), counted from the last job's end.
    const idle = await idler.idle;
    const idledAfter = (idled.at ?? performance.now()) - lastEnded;
    expect(idledAfter).toBeGreaterThanOrEqual(300);
    expect(idledAfter).toBeLessThan(2000);
    expect(idle.idleMs).toBeGreaterThanOrEqual(300);
    expect(ran).toEqual([1, 2]);
    // A worker idled out closes normally, and quickly.
    const closing = performance.now();
    await idler.close(false);
    expect(performance.now() - closing).toBeLessThan(2000);
    // A worker without idleExitMs never says it is idle.
    expect(await Promise.race([other.idle.then(() => "idle"), sleep(100).then(() => "running")])).toBe(
      "running",
    );
  }, 30_000);

  it("is idle after idleExitMs on a queue that never had work", async () => {
    const started = performance.now();
    const idler = await worker(server.queueName(), { idleExitMs: 200, runJob: async () => OK });
    const idle = await idler.idle;
    expect(performance.now() - started).toBeGreaterThanOrEqual(200);
    expect(performance.now() - started).toBeLessThan(3000);
    expect(idle.idleMs).toBeGreaterThanOrEqual(200);
    await idler.close(false);
  }, 15_000);
});

describe("runWorker's idleExitMs", () => {
  it("refuses a value that is not a number of ms > 0, before connecting", async () => {
    for (const idleExitMs of [0, -5, Number.NaN, Number.POSITIVE_INFINITY]) {
      await expect(
        runWorker({
          url: "redis://127.0.0.1:1",
          queue: "q",
          concurrency: 1,
          idleExitMs,
          runJob: async () => OK,
        }),
      ).rejects.toThrow(
        `runWorker: idleExitMs must be a number of ms > 0, such as 60000; got ${idleExitMs}. Leave it out to run until closed.`,
      );
    }
  });
});

/** A promise and its resolve. */
function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve: (value: T) => void = () => {};
  const promise = new Promise<T>((done) => (resolve = done));
  return { promise, resolve };
}
