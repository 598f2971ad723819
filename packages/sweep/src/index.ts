export type { Constraint } from "./constraint.js";
export { parseConstraint } from "./constraint.js";
export type { AxisValues } from "./designs.js";
export {
  designPoints,
  designSize,
  designSizeProblem,
  gridPoints,
  gridShape,
  latinHypercubePoints,
  randomPoints,
} from "./designs.js";
export { ENERGY_METRIC_PATHS } from "./energy-metrics.js";
export type { Executor, ExecutorEvent, JobOutcome, SweepJob, SweepJobRun } from "./executor.js";
export { SWEEP_LIMITS, timeoutMs } from "./limits.js";
// The lost-worker settings of `kb worker` (the worker itself is @kb/sweep/redis's): constants only.
export type { LostWorkerSettings } from "./lost-worker.js";
export { LOST_WORKER_DEFAULTS, RECONNECT_CAP_MS, REDIS_GIVE_UP_S } from "./lost-worker.js";
export type { PointInputs, SkippedPoint, SweepPlan, SweepPoint } from "./points.js";
export { planSweep, pointInputs, pointKey } from "./points.js";
export { SeededRandom } from "./random.js";
export type { SweepAxis, SweepDesign, SweepSpec } from "./spec.js";
export { parseSweepSpec, sweepSpecSchema } from "./spec.js";
export type { MetricValue, SweepRow } from "./table.js";
export {
  csvHeader,
  csvRow,
  describeValues,
  jsonlRow,
  metricAt,
  metricsOf,
  sweepRowSchema,
} from "./table.js";
