import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type RunningRedis, redisSkipReason, runRedisTests, startRedis } from "@kb/tooling/node/redis";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { kbBinJs, killAll, rowsOf, startKb, writeSpec } from "./sweep-redis-support.js";

// Faults of an unlucky network under kb sweep --redis and kb worker (issue 32), on real
// redis-servers started and killed here: Redis restarted without its data while a sweep waits (the
// sweep waited for ever with 0 rows and no message: now it queues the lost points again and
// finishes); Redis gone for good (workers stayed alive without reconnecting, the sweep waited in
// silence: now both say so and exit 1 after --give-up-s). Skipped without redis-server or the
// built kb, except in CI.

const haveKb = existsSync(kbBinJs);
if (!runRedisTests) console.warn(`kb sweep --redis fault tests skipped: ${redisSkipReason}`);

const scratch = mkdtempSync(join(tmpdir(), "kb-sweep-redis-faults-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A sweep of vector-add over `sizes`, in a folder of its own. */
function spec(name: string, sizes: number[]): { dir: string; file: string } {
  const dir = mkdtempSync(join(scratch, `${name}-`));
  const file = writeSpec(dir, [
    `name: ${name}`,
    "bench: vector-add",
    "topology: default",
    "params: { chunk: 4096 }",
    "axes:",
    `  n: { path: params.n, values: [${sizes.join(", ")}] }`,
  ]);
  return { dir, file };
}

describe.skipIf(!runRedisTests || !haveKb)(
  "fault: kb sweep --redis and kb worker when Redis restarts or goes",
  () => {
    const servers: RunningRedis[] = [];
    async function server(port?: number): Promise<RunningRedis> {
      const redis = await startRedis({
        dir: mkdtempSync(join(scratch, "redis-")),
        ...(port !== undefined ? { port } : {}),
      });
      servers.push(redis);
      return redis;
    }
    afterEach(async () => {
      await killAll();
      for (const redis of servers.splice(0)) await redis.stop();
    });

    it("queues again the points a Redis restarted without its data lost, with a line, and finishes every row once", async () => {
      const first = await server();
      const { dir, file } = spec("restarted", [4096, 8192, 16384, 32768, 65536, 131072]);
      const sweep = startKb(["sweep", file, "--redis", first.url], {});
      await sweep.waitForStderr(/queued on /, 20_000);
      // No worker yet: the six jobs wait on Redis, which is killed and replaced by an empty one.
      await first.stop();
      const second = await server(first.port);
      const worker = startKb(
        ["worker", "--redis", second.url, "--queue", "kb-sweep-restarted", "--concurrency", "2"],
        {},
      );
      expect(await sweep.exited, sweep.stderr()).toBe(0);
      expect(sweep.stderr()).toMatch(
        new RegExp(
          `kb sweep: 6 queued points are no longer on Redis at 127\\.0\\.0\\.1:${first.port} \\(restarted without its data\\?\\): queued again \\(point 0, 1, 2, 3, 4, 5\\)\\.`,
        ),
      );
      expect(sweep.stdout()).toContain(
        "restarted: 6 points (0 from an earlier run, 6 run now): 6 ok, 0 failed",
      );
      const rows = rowsOf(join(dir, "results", "restarted"));
      expect(rows.map((row) => row.point).sort()).toEqual([0, 1, 2, 3, 4, 5]);
      worker.signalGroup("SIGTERM");
      expect(await worker.exited).toBe(143);
    }, 120_000);

    it("says when Redis is gone, and exits 1 after --give-up-s: a worker and a sweep, the sweep's rows kept", async () => {
      const redis = await server();
      const { dir, file } = spec("gone", [4096, 8192]);
      const sweep = startKb(["sweep", file, "--redis", redis.url, "--give-up-s", "3"], {});
      await sweep.waitForStderr(/queued on /, 20_000);
      const worker = startKb(
        ["worker", "--redis", redis.url, "--queue", "elsewhere", "--give-up-s", "3"],
        {},
      );
      await worker.waitForStderr(/taking points of queue/, 20_000);
      await redis.stop();
      const where = `Redis at 127\\.0\\.0\\.1:${redis.port}`;
      for (const [kb, who] of [
        [worker, "kb worker"],
        [sweep, "kb sweep"],
      ] as const) {
        expect(await kb.exited, kb.stderr()).toBe(1);
        expect(kb.stderr()).toMatch(
          new RegExp(
            `${who}: ${where} does not answer \\(.+\\); reconnecting every 5 s at most; giving up after 3 s\\.\\n`,
          ),
        );
        expect(kb.stderr()).toMatch(
          new RegExp(
            `\\[SWEEP_QUEUE\\] ${who}: ${where} \\(redis://127\\.0\\.0\\.1:${redis.port}\\) has not answered for \\d+ s \\(.+\\): giving up\\. Start redis-server there again`,
          ),
        );
        expect(kb.stderr()).not.toMatch(/\n\s+at /);
      }
      expect(sweep.stderr()).toContain(
        `kb sweep: 0 of 2 points are in ${join(dir, "results", "gone", "results.csv")} and results.jsonl; run the same command again to resume once Redis answers.`,
      );
    }, 60_000);
  },
);
