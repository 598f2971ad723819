export type { ExecutorOptions, ExecutorStats, NonFiniteOrigin, OpSnapshot } from "./executor.js";
export { DataExecutor } from "./executor.js";
export type { GemmOptions, GemmProblem, GemmRowSlice, GemmShape } from "./gemm/index.js";
export {
  DEFAULT_MIN_SPLIT_FLOPS,
  fromFloat32,
  igemm,
  sgemm,
  splitGemmRows,
  toFloat32,
} from "./gemm/index.js";
export { applyMath } from "./math.js";
export { MEMORY_STORE_PAGE_BYTES, MemoryStore, type MemoryStoreOptions } from "./memory-store.js";
export type { AppliedTolerance, Tolerance, ToleranceNorm } from "./tolerance.js";
export { TOLERANCE_NORMS, TOLERANCES, toleranceProblem } from "./tolerance.js";
export type {
  Mismatch,
  NonFiniteCounts,
  NonFiniteElement,
  OutputCheck,
  VerifyOptions,
  VerifyReport,
} from "./verify.js";
export { verify } from "./verify.js";
export {
  formatError,
  formatNonFinite,
  formatTolerance,
  formatVerifyTable,
  shownMaxErrors,
} from "./verify-table.js";
