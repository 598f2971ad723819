import { redisSkipReason, runRedisTests } from "@kb/tooling/node/redis";
import { Queue, Worker } from "bullmq";
import { describe, expect, it } from "vitest";
import type { ExecutorEvent, JobOutcome } from "../../executor.js";
import { parseRedisUrl } from "./connection.js";
import type { QueuedJob } from "./job-schema.js";
import { RedisExecutor } from "./redis-executor.js";
import { type RunningWorker, runWorker } from "./run-worker.js";
import { TEST_VERSIONS, testJob, useRedisServer } from "./test-server.js";

// RedisExecutor and runWorker on a real redis-server (the sweep's side and the worker's, in this
// process; the points are answered by a function, not kb run: packages/e2e-tests' sweep-redis-e2e test
// runs the real thing). Skipped without redis-server, except in CI.

if (!runRedisTests) console.warn(`Redis queue tests skipped: ${redisSkipReason}`);

const job = testJob;

/** A promise and its resolve. */
function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve: (value: T) => void = () => {};
  const promise = new Promise<T>((done) => (resolve = done));
  return { promise, resolve };
}

/** Resolves when `check` is true (polled), or rejects after `ms`. */
async function until(check: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = performance.now() + ms;
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error("timed out waiting");
    await new Promise((done) => setTimeout(done, 20));
  }
}

describe.skipIf(!runRedisTests)("RedisExecutor with runWorker on redis-server", () => {
  const server = useRedisServer("test");

  async function open(queue: string): Promise<{ executor: RedisExecutor; events: ExecutorEvent[] }> {
    const executor = await RedisExecutor.open({
      url: server.url(),
      queue,
      root: server.dir,
      versions: TEST_VERSIONS,
    });
    server.closeLater(() => executor.close());
    const events: ExecutorEvent[] = [];
    executor.onEvent((event) => events.push(event));
    return { executor, events };
  }

  async function worker(
    queue: string,
    runJob: (queued: QueuedJob) => Promise<JobOutcome>,
    extra: { concurrency?: number; lockMs?: number; stalledCheckMs?: number; maxLost?: number } = {},
  ): Promise<RunningWorker> {
    const running = await runWorker({ url: server.url(), queue, concurrency: 1, runJob, ...extra });
    server.closeLater(() => running.close(true));
    return running;
  }

  /** Jobs of every state left on the queue. */
  async function leftOn(queue: string): Promise<number> {
    const raw = new Queue(queue, { connection: parseRedisUrl(server.url()).options });
    try {
      const counts = await raw.getJobCounts();
      return Object.values(counts).reduce((sum, count) => sum + count, 0);
    } finally {
      await raw.close();
    }
  }

  it("runs each job once on the workers and reports it once; a worker stopped mid-point gives it back at once", async () => {
    const queue = server.queueName();
    const { executor, events } = await open(queue);
    const held = deferred<JobOutcome>();
    const takenByFirst: number[] = [];
    const first = await worker(
      queue,
      (queued) => {
        takenByFirst.push(queued.job.point);
        return held.promise;
      },
      { concurrency: 2 },
    );
    for (const point of [0, 1, 2, 3]) executor.submit(job(point));
    await until(() => takenByFirst.length === 2);
    // Stopped (Ctrl-C): its two points go back to the queue, not after a lock lapses.
    const stopped = performance.now();
    await first.close(true);
    const ranBySecond: number[] = [];
    await worker(queue, async (queued) => {
      ranBySecond.push(queued.job.point);
      return { status: "ok", results: { simTimeNs: 10 * queued.job.point } };
    });
    await until(() => events.filter((event) => event.type === "finished").length === 4);
    expect(performance.now() - stopped).toBeLessThan(5000);
    held.resolve({ status: "ok", results: "too late" });
    expect(ranBySecond.sort()).toEqual([0, 1, 2, 3]);
    const finished = events.filter((event) => event.type === "finished");
    expect(finished.map((event) => [event.job.point, event.outcome]).sort()).toEqual(
      [0, 1, 2, 3].map((point) => [point, { status: "ok", results: { simTimeNs: 10 * point } }]),
    );
    // Each job object is the one submitted; a started event came for each.
    expect(
      new Set(events.filter((event) => event.type === "started").map((event) => event.job.point)),
    ).toEqual(new Set([0, 1, 2, 3]));
    // Recorded jobs are removed from Redis.
    await until(async () => (await leftOn(queue)) === 0);
  }, 30_000);

  it("gives a job back to the queue when runJob answers null, to be run and reported once", async () => {
    const queue = server.queueName();
    const { executor, events } = await open(queue);
    const runs: string[] = [];
    let givenBack = 0;
    await runWorker({
      url: server.url(),
      queue,
      concurrency: 1,
      // The first run's process was stopped from outside: not an outcome.
      runJob: async (queued) => {
        runs.push(`point ${queued.job.point}`);
        return runs.length === 1 ? null : { status: "ok", results: { run: runs.length } };
      },
      onJob: (event) => {
        if (event.type === "given back") givenBack++;
      },
    }).then((running) => server.closeLater(() => running.close(true)));
    executor.submit(job(4));
    await until(() => events.some((event) => event.type === "finished"));
    expect(runs).toEqual(["point 4", "point 4"]);
    expect(givenBack).toBe(1);
    expect(events.filter((event) => event.type === "finished")).toEqual([
      { type: "finished", job: job(4), outcome: { status: "ok", results: { run: 2 } } },
    ]);
  }, 30_000);

  it("takes the outcome of a job that finished while no sweep listened, without running it again", async () => {
    const queue = server.queueName();
    const first = await open(queue);
    const held = deferred<JobOutcome>();
    let runs = 0;
    await worker(queue, () => {
      runs++;
      return held.promise;
    });
    first.executor.submit(job(5));
    await until(() => runs === 1);
    // The sweep is interrupted while the worker holds the point, which then finishes unrecorded.
    await first.executor.close();
    held.resolve({ status: "ok", results: { simTimeNs: 42 } });
    await until(async () => {
      const raw = new Queue(queue, { connection: parseRedisUrl(server.url()).options });
      const completed = await raw.getCompletedCount();
      await raw.close();
      return completed === 1;
    });
    // Run again: the point's job is found finished.
    const second = await open(queue);
    second.executor.submit(job(5));
    await until(() => second.events.some((event) => event.type === "finished"));
    expect(second.events.find((event) => event.type === "finished")).toMatchObject({
      job: { point: 5 },
      outcome: { status: "ok", results: { simTimeNs: 42 } },
    });
    expect(runs).toBe(1);
    await until(async () => (await leftOn(queue)) === 0);
  }, 30_000);

  it("records a point as failed when its worker is lost more often than --max-lost allows", async () => {
    const queue = server.queueName();
    const { executor, events } = await open(queue);
    // A worker that takes the job and dies: its lock is never renewed.
    const connection = parseRedisUrl(server.url()).options;
    const taken = deferred<void>();
    const dying = new Worker(
      queue,
      () => {
        taken.resolve();
        return new Promise(() => {});
      },
      // No stalled check of its own: the first check takes a cluster-wide turn of its interval.
      { connection, lockDuration: 500, skipStalledCheck: true },
    );
    server.closeLater(() => dying.close(true));
    executor.submit(job(9));
    await taken.promise;
    await dying.close(true);
    // The survivor finds the job stalled; with maxLost 0 the first loss fails it.
    let ran = 0;
    await worker(
      queue,
      async () => {
        ran++;
        return { status: "ok", results: {} };
      },
      { lockMs: 500, stalledCheckMs: 200, maxLost: 0 },
    );
    await until(() => events.some((event) => event.type === "finished"));
    const finished = events.find((event) => event.type === "finished");
    expect(finished?.type === "finished" && finished.outcome.status).toBe("failed");
    expect(
      finished?.type === "finished" && finished.outcome.status === "failed" && finished.outcome.reason,
    ).toMatch(
      /^its worker was lost while running it, more often than the workers' --max-lost allows \(.*stalled more than allowable limit/,
    );
    expect(ran).toBe(0);
  }, 30_000);

  it("refuses a database the server does not have, hiding the password", async () => {
    // The server has no password (a warning, not an error) and 16 databases.
    const port = new URL(server.url()).port;
    const error = await RedisExecutor.open({
      url: `redis://:s3cret@127.0.0.1:${port}/99`,
      queue: "q",
      root: server.dir,
      versions: TEST_VERSIONS,
    }).then(
      async (executor) => {
        await executor.close();
        return "opened";
      },
      (caught: unknown) => (caught instanceof Error ? caught.message : String(caught)),
    );
    expect(error).toBe(
      `[SWEEP_QUEUE] cannot use Redis at 127.0.0.1:${port} (redis://:***@127.0.0.1:${port}/99): ERR DB index is out of range. Check that redis-server runs there and that the host, port, password and firewall let this machine in, or give another URL.`,
    );
  }, 15_000);
});
