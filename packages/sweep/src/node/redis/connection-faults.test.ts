import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isKbError } from "@kb/errors";
import { runRedisTests, startRedis } from "@kb/tooling/node/redis";
import { describe, expect, it } from "vitest";
import { checkRedis, parseRedisUrl } from "./connection.js";
import { RedisExecutor } from "./redis-executor.js";
import { runWorker } from "./run-worker.js";

// Faults of a Redis URL (issue 32): a password with a bare `%` (not a percent-escape) was a
// URIError from decodeURIComponent, a stack and exit 2; it is a SWEEP_QUEUE error saying to
// write %25, the password never in it.

/** The SWEEP_QUEUE error `run` throws (fails the test when it throws nothing or something else). */
function queueError(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    if (isKbError(error) && error.code === "SWEEP_QUEUE") return error.message;
    throw error;
  }
  throw new Error("expected a SWEEP_QUEUE error");
}

describe("fault: a Redis URL whose password or user has a bare %", () => {
  it.each([
    ["redis://:pa%ss@127.0.0.1:6379", '"redis://:***@127.0.0.1:6379": its password'],
    ["redis://kb:pa%ss@127.0.0.1:6379", '"redis://kb:***@127.0.0.1:6379": its password'],
    ["redis://pa%ss:x@127.0.0.1:6379", '"redis://pa%ss:***@127.0.0.1:6379": its user name'],
  ])("$0 is a SWEEP_QUEUE error saying to percent-encode, the password not printed", (url, where) => {
    const message = queueError(() => parseRedisUrl(url));
    expect(message).toContain(where);
    expect(message).toContain("percent-encoded: write % as %25");
    // The user name is printed as in any redacted URL; the password is not.
    expect(message.replaceAll("redis://pa%ss:", "")).not.toContain("pa%ss");
  });

  it.skipIf(!runRedisTests)(
    "a password with % written as %25 is the one the server wants",
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "kb-percent-"));
      const redis = await startRedis({ dir, password: "pa%ss" });
      try {
        const target = parseRedisUrl(`redis://:pa%25ss@127.0.0.1:${redis.port}`);
        expect(target.secret).toBe("pa%ss");
        await checkRedis(target);
      } finally {
        await redis.stop();
        rmSync(dir, { recursive: true, force: true });
      }
    },
    20_000,
  );
});

describe("fault: a queue name BullMQ refuses", () => {
  it.each(["a:b", ""])(
    "%j is a SWEEP_QUEUE error for the sweep and the worker, before any connection",
    async (queue) => {
      // Port 1: nothing listens there, so an error about the name says it was checked first.
      const url = "redis://127.0.0.1:1";
      const errors = await Promise.all([
        RedisExecutor.open({ url, queue, root: tmpdir(), versions: { "@kb/runtime": "0" } }).then(
          () => "opened",
          (error: unknown) => error,
        ),
        runWorker({ url, queue, concurrency: 1, runJob: async () => null }).then(
          () => "started",
          (error: unknown) => error,
        ),
      ]);
      for (const error of errors) {
        expect(isKbError(error) && error.code).toBe("SWEEP_QUEUE");
        expect(String(error)).toContain(
          `queue name ${JSON.stringify(queue)}: a BullMQ queue name is not empty and has no ":"`,
        );
      }
    },
  );
});
