import { KbError } from "@kb/errors";

// Loading `@kb/sweep/redis`, whose BullMQ and ioredis are optional peer dependencies: a user who
// never queues on Redis does not install them, and one who does is told how.

/** The `@kb/sweep/redis` entry: the queue executor and the worker. */
export type RedisSweep = typeof import("../redis.js");

/** The packages `@kb/sweep/redis` needs beyond @kb/sweep's own dependencies. */
export const REDIS_PEERS = ["bullmq", "ioredis"] as const;

/**
 * Loads `@kb/sweep/redis` (`kb sweep --redis`, `kb worker`). `load` imports it (a test gives one
 * that fails).
 *
 * Throws `SWEEP_QUEUE` saying to `npm install bullmq ioredis` when one of them is not installed;
 * other failures as they are.
 */
export async function loadRedisSweep(
  load: () => Promise<RedisSweep> = () => import("../redis.js"),
): Promise<RedisSweep> {
  try {
    return await load();
  } catch (error) {
    const missing = missingPeer(error);
    if (missing === undefined) throw error;
    throw new KbError(
      "SWEEP_QUEUE",
      `kb sweep --redis / kb worker need bullmq and ioredis: npm install bullmq ioredis (in the project that has @kb/cli, or beside a global kb: npm install -g bullmq ioredis). They are optional peer dependencies of @kb/sweep, left out of installs that never queue on Redis; ${missing} was not found.`,
      { cause: error },
    );
  }
}

/** The peer whose absence `error` reports (Node's ERR_MODULE_NOT_FOUND), if it is one of ours. */
function missingPeer(error: unknown): string | undefined {
  if (!(error instanceof Error) || (error as NodeJS.ErrnoException).code !== "ERR_MODULE_NOT_FOUND") {
    return undefined;
  }
  const name = /Cannot find (?:package|module) '([^']+)'/.exec(error.message)?.[1];
  return REDIS_PEERS.find((peer) => name === peer || name?.startsWith(`${peer}/`) === true);
}
