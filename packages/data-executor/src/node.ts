// `@kb/data-executor/node`: the GEMM thread pool, on `node:worker_threads` (DESIGN §9). The main
// entry runs anywhere; pass a pool to `DataExecutor` through its `pool` option.
export type { GemmPoolOptions, GemmProblem } from "./gemm/gemm-pool.js";
export { GemmPool } from "./gemm/gemm-pool.js";
