// For the tests on a real redis-server (*.test.ts beside this file): one server per describe
// block, started before its tests in a temp folder and stopped after them, pass or fail, with
// everything the tests asked to close. Not part of the package's API.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type RunningRedis, startRedis } from "@kb/tooling/node/redis";
import { afterAll, beforeAll } from "vitest";
import type { SweepJob } from "../../executor.js";
import type { QueuedJob } from "./job-schema.js";

/** A job of point `point` as a sweep queues it (a valid key and digest, the versions). */
export function testJob(point: number): SweepJob {
  return {
    point,
    key: point.toString(16).padStart(64, "0"),
    bench: "./bench.ts",
    benchDigest: "d".repeat(64),
    inputs: { topology: {}, params: { n: point }, plugins: [] },
    run: { verify: false, memoryMb: 1024 },
  };
}

/** The versions the tests' sweeps send. */
export const TEST_VERSIONS = { "@kb/runtime": "0.0.0" } as const;

/** {@link testJob} as it crosses Redis. */
export function testQueued(point: number): QueuedJob {
  return { job: testJob(point), pluginDigests: {}, versions: TEST_VERSIONS };
}

/** The server of a describe block, as {@link useRedisServer} gives it. */
export interface TestRedis {
  /** The temp folder (the server's, and the tests' own files). */
  readonly dir: string;
  /** The server's URL (once started). */
  url(): string;
  /** A queue name no other test of the block used: `PREFIX-N`. */
  queueName(): string;
  /** Closes `close` after the block's tests (last registered, first closed), before the server stops. */
  closeLater(close: () => Promise<unknown>): void;
}

/** Registers beforeAll / afterAll that start and stop a redis-server; call inside a describe. */
export function useRedisServer(prefix: string): TestRedis {
  let dir = "";
  let redis: RunningRedis | undefined;
  const closers: (() => Promise<unknown>)[] = [];
  let queues = 0;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), `kb-${prefix}-`));
    redis = await startRedis({ dir });
  }, 20_000);

  afterAll(async () => {
    for (const close of closers.reverse()) await close().catch(() => {});
    await redis?.stop();
    if (dir !== "") rmSync(dir, { recursive: true, force: true });
  });

  return {
    get dir() {
      return dir;
    },
    url: () => redis?.url ?? "",
    queueName: () => `${prefix}-${++queues}`,
    closeLater: (close) => {
      closers.push(close);
    },
  };
}
