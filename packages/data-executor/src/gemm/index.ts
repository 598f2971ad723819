export { fromFloat32, toFloat32 } from "./convert.js";
export type { GemmProblem } from "./gemm-pool.js";
export { igemm } from "./igemm.js";
export type { GemmOptions } from "./sgemm.js";
export { sgemm } from "./sgemm.js";
export type { GemmRowSlice, GemmShape } from "./split.js";
export { DEFAULT_MIN_SPLIT_FLOPS, splitGemmRows } from "./split.js";
