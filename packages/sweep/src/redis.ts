// `@kb/sweep/redis`: sweeps over BullMQ on Redis, for clusters. The sweep's side (RedisExecutor)
// queues points; `kb worker`s on any machine (runWorker) take them, run them as local processes
// and send the outcomes back. A separate entry so that only its users load BullMQ and ioredis.

export type { LostWorkerSettings } from "./lost-worker.js";
export { LOST_WORKER_DEFAULTS, RECONNECT_CAP_MS, REDIS_GIVE_UP_S } from "./lost-worker.js";
export type { RedisTarget } from "./node/redis/connection.js";
export {
  CONNECT_TIMEOUT_MS,
  checkRedis,
  parseRedisUrl,
  redactRedisUrl,
  redactText,
} from "./node/redis/connection.js";
export type { WorkerIdle } from "./node/redis/idle-watch.js";
export type { JobFiles } from "./node/redis/job-files.js";
export { jobFiles, pathDigest, pluginPaths, queuedJob, rootRelative } from "./node/redis/job-files.js";
export type { CheckedJob, QueuedJob } from "./node/redis/job-schema.js";
export {
  checkQueuedJob,
  isBenchName,
  MAX_JOB_JSON,
  queuedJobSchema,
} from "./node/redis/job-schema.js";
export { jobRunner } from "./node/redis/pool-runner.js";
export type { RedisExecutorOptions } from "./node/redis/redis-executor.js";
export { queueNameOf, RedisExecutor } from "./node/redis/redis-executor.js";
export type { RunningWorker, RunWorkerOptions, WorkerJobEvent } from "./node/redis/run-worker.js";
export { runWorker } from "./node/redis/run-worker.js";
