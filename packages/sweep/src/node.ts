// The Node-only part of @kb/sweep: spec and topology files, the results files, the local process
// pool and the sweep runner.

export type { LockHolder } from "./out-lock.js";
export { LOCK_FILE, OutLock } from "./out-lock.js";
export { outputError } from "./output-error.js";
export type { LocalProcessPoolOptions, PointCommand } from "./process-pool.js";
export { childEnvironment, LocalProcessPool, outcomeOf } from "./process-pool.js";
export { RESULTS_CSV, RESULTS_JSONL, ResultsTable } from "./results-files.js";
export type { RunSweepOptions, SweepProgress, SweepSummary } from "./run-sweep.js";
export { runSweep } from "./run-sweep.js";
export { isPath, loadSweepSpec, readTopologyInput } from "./spec-file.js";
