// The Node-only part of @kb/sweep: spec and topology files, the results files, the local process
// pool and the sweep runner.

export type { LockHolder } from "./node/out-lock.js";
export { LOCK_FILE, OutLock } from "./node/out-lock.js";
export type { LocalProcessPoolOptions, PointCommand } from "./node/process-pool.js";
export { childEnvironment, LocalProcessPool, outcomeOf } from "./node/process-pool.js";
export type { RedisSweep } from "./node/redis-loader.js";
export { loadRedisSweep, REDIS_PEERS } from "./node/redis-loader.js";
export { RESULTS_CSV, RESULTS_JSONL, ResultsTable } from "./node/results-files.js";
export type { RunSweepOptions, SweepProgress, SweepSummary } from "./node/run-sweep.js";
export { runSweep } from "./node/run-sweep.js";
export { isPath, loadSweepSpec, readTopologyInput } from "./node/spec-file.js";
export { outputError } from "./output-error.js";
