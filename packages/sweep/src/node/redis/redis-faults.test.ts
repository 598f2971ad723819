import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isKbError } from "@kb/errors";
import { type RunningRedis, redisSkipReason, runRedisTests, startRedis } from "@kb/tooling/node/redis";
import { Worker } from "bullmq";
import { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import type { ExecutorEvent, JobOutcome } from "../../executor.js";
import { parseRedisUrl } from "./connection.js";
import { RedisExecutor } from "./redis-executor.js";
import { type RunningWorker, runWorker } from "./run-worker.js";
import { TEST_VERSIONS, testJob } from "./test-server.js";

// Faults of an unlucky network (issue 32), on real redis-servers this file starts and kills: Redis
// restarted without its data while a sweep waits (the sweep waited for ever, 0 rows, no message);
// a finished job whose event the sweep missed; Redis gone for good (workers stopped reconnecting
// after a minute but stayed alive; the sweep waited in silence). Skipped without redis-server,
// except in CI.

if (!runRedisTests) console.warn(`Redis fault tests skipped: ${redisSkipReason}`);

const OK: JobOutcome = { status: "ok", results: { fine: true } };

/** Resolves when `check` is true (polled), or rejects after `ms`. */
async function until(check: () => boolean, ms: number, what: string): Promise<void> {
  const deadline = performance.now() + ms;
  while (!check()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((done) => setTimeout(done, 50));
  }
}

describe.skipIf(!runRedisTests)("fault: Redis lost, restarted or gone under a sweep and its workers", () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
    cleanups.length = 0;
  }, 30_000);

  async function server(port?: number): Promise<RunningRedis> {
    const dir = mkdtempSync(join(tmpdir(), "kb-redis-faults-"));
    const redis = await startRedis({ dir, ...(port !== undefined ? { port } : {}) });
    cleanups.push(async () => {
      await redis.stop();
      rmSync(dir, { recursive: true, force: true });
    });
    return redis;
  }

  async function worker(
    url: string,
    queue: string,
    giveUpMs?: number,
  ): Promise<{ running: RunningWorker; lines: string[] }> {
    const lines: string[] = [];
    const running = await runWorker({
      url,
      queue,
      concurrency: 2,
      runJob: async () => OK,
      onError: (line) => lines.push(line),
      ...(giveUpMs !== undefined ? { giveUpMs } : {}),
    });
    cleanups.push(() => running.close(true));
    return { running, lines };
  }

  /** A sweep's executor on `url`, closed after the test, its finished events and notices kept. */
  async function sweep(
    url: string,
    queue: string,
    extra: { lostCheckMs?: number; giveUpMs?: number } = {},
  ): Promise<{ executor: RedisExecutor; finished: ExecutorEvent[]; notices: string[] }> {
    const notices: string[] = [];
    const executor = await RedisExecutor.open({
      url,
      queue,
      root: tmpdir(),
      versions: TEST_VERSIONS,
      ...extra,
      onNotice: (line) => notices.push(line),
    });
    cleanups.push(() => executor.close());
    const finished: ExecutorEvent[] = [];
    executor.onEvent((event) => {
      if (event.type === "finished") finished.push(event);
    });
    return { executor, finished, notices };
  }

  it("queues again, with a line, the jobs a Redis restarted without its data lost, and records them once", async () => {
    const first = await server();
    const { executor, finished, notices } = await sweep(first.url, "restarted", { lostCheckMs: 300 });
    for (const point of [0, 1, 2]) executor.submit(testJob(point));
    // Queued, then the server is killed and another one, empty, takes its port.
    const probe = new Redis(parseRedisUrl(first.url).options);
    const deadline = performance.now() + 10_000;
    while ((await probe.llen("bull:restarted:wait")) < 3 && performance.now() < deadline) {
      await new Promise((done) => setTimeout(done, 50));
    }
    probe.disconnect();
    await first.stop();
    const second = await server(first.port);
    await worker(second.url, "restarted");
    await until(() => finished.length === 3, 20_000, "the three points");
    expect(finished.map((event) => event.type === "finished" && event.outcome)).toEqual([OK, OK, OK]);
    expect(finished.map((event) => event.job.point).sort()).toEqual([0, 1, 2]);
    expect(notices.join("\n")).toMatch(
      new RegExp(
        `^3 queued points are no longer on Redis at 127\\.0\\.0\\.1:${first.port} \\(restarted without its data\\?\\): queued again \\(point 0, 1, 2\\)\\.`,
      ),
    );
  }, 40_000);

  it("records a job that finished on the queue without its event reaching the sweep", async () => {
    const redis = await server();
    const { executor, finished } = await sweep(redis.url, "missed", { lostCheckMs: 300 });
    const job = testJob(7);
    executor.submit(job);
    // Finished by hand, as BullMQ would but without the event (as when the capped event stream
    // dropped it before the sweep read it).
    const id = `${job.key}-1`;
    const client = new Redis(parseRedisUrl(redis.url).options);
    try {
      const deadline = performance.now() + 10_000;
      while ((await client.lrem("bull:missed:wait", 0, id)) === 0 && performance.now() < deadline) {
        await new Promise((done) => setTimeout(done, 50));
      }
      const now = Date.now();
      await client
        .multi()
        .zadd("bull:missed:completed", now, id)
        .hset(`bull:missed:${id}`, "returnvalue", JSON.stringify(OK), "finishedOn", String(now))
        .exec();
    } finally {
      client.disconnect();
    }
    await until(() => finished.length === 1, 10_000, "the point");
    expect(finished[0]).toMatchObject({ type: "finished", job: { point: 7 }, outcome: OK });
  }, 20_000);

  it("says when Redis goes away, and gives up after giveUpMs with a SWEEP_QUEUE error: the sweep and a worker", async () => {
    const redis = await server();
    const { executor, notices } = await sweep(redis.url, "gone", { giveUpMs: 1500 });
    const { running, lines } = await worker(redis.url, "gone", 1500);
    await redis.stop();
    const [sweepError, workerError] = await Promise.all([executor.gaveUp, running.gaveUp]);
    for (const [error, who, told] of [
      [sweepError, "kb sweep", notices],
      [workerError, "kb worker", lines],
    ] as const) {
      expect(isKbError(error) && error.code).toBe("SWEEP_QUEUE");
      expect(error.message).toMatch(
        new RegExp(
          `^\\[SWEEP_QUEUE\\] ${who}: Redis at 127\\.0\\.0\\.1:${redis.port} \\(redis://127\\.0\\.0\\.1:${redis.port}\\) has not answered for \\d+ s \\(connect ECONNREFUSED 127\\.0\\.0\\.1:${redis.port}\\): giving up\\. Start redis-server there again`,
        ),
      );
      expect(told[0]).toMatch(
        new RegExp(
          `^Redis at 127\\.0\\.0\\.1:${redis.port} does not answer \\(.+\\); reconnecting every 5 s at most; giving up after 2 s\\.$`,
        ),
      );
    }
    // Closing does not wait for the server that is gone.
    await Promise.all([executor.close(), running.close(true)]);
  }, 20_000);

  it("keeps a worker reconnecting for ever with giveUpMs 0, and it takes jobs again once Redis is back", async () => {
    const first = await server();
    const { lines } = await worker(first.url, "back", 0);
    await first.stop();
    await until(() => lines.some((line) => line.includes("does not answer")), 10_000, "the line");
    expect(lines.join("\n")).toContain("retrying until it is back");
    const second = await server(first.port);
    await until(() => lines.some((line) => line.includes("answers again")), 15_000, "the line");
    const { executor, finished } = await sweep(second.url, "back");
    executor.submit(testJob(1));
    await until(() => finished.length === 1, 15_000, "the point");
    expect(finished[0]).toMatchObject({ outcome: OK });
  }, 40_000);

  it("records a job finished with something that is not an outcome as failed, saying so", async () => {
    const redis = await server();
    const { executor, finished } = await sweep(redis.url, "forged");
    // A worker of someone else's making, answering with a reason that is no text.
    const forger = new Worker("forged", async () => ({ status: "failed", reason: { toString: 1 } }), {
      connection: parseRedisUrl(redis.url).options,
    });
    cleanups.push(() => forger.close(true));
    executor.submit(testJob(4));
    await until(() => finished.length === 1, 10_000, "the point");
    expect(finished[0]).toMatchObject({
      outcome: { status: "failed", reason: "the worker returned no outcome (another kb version?)" },
    });
  }, 20_000);
});
