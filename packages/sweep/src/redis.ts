// `@kb/sweep/redis`: sweeps over BullMQ on Redis, for clusters. The sweep's side (RedisExecutor)
// queues points; `kb worker`s on any machine (runWorker) take them, run them as local processes
// and send the outcomes back. A separate entry so that only its users load BullMQ and ioredis.
export type { RedisTarget } from "./redis/connection.js";
export {
  CONNECT_TIMEOUT_MS,
  checkRedis,
  parseRedisUrl,
  redactRedisUrl,
  redactText,
} from "./redis/connection.js";
export type { WorkerIdle } from "./redis/idle-watch.js";
export type { QueuedJob } from "./redis/job-files.js";
export { pathDigest, pluginPaths, queuedJob, refusalOf } from "./redis/job-files.js";
export type { LostWorkerSettings } from "./redis/lost-worker.js";
export { LOST_WORKER_DEFAULTS } from "./redis/lost-worker.js";
export { jobRunner } from "./redis/pool-runner.js";
export type { RedisExecutorOptions } from "./redis/redis-executor.js";
export { queueNameOf, RedisExecutor } from "./redis/redis-executor.js";
export type { RunningWorker, RunWorkerOptions, WorkerJobEvent } from "./redis/run-worker.js";
export { runWorker } from "./redis/run-worker.js";
