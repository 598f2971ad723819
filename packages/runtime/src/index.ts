export type { Bench, BenchCheck, BenchOutcome, BenchReport, BenchSeries } from "./bench.js";
export { defineBench, describeParams, isBench, parseBenchParams } from "./bench.js";
export type { BenchPackage } from "./bench-imports.js";
export {
  BENCH_COMPILER_OPTIONS,
  BENCH_PACKAGES,
  isBenchPackage,
  MANIFEST_PACKAGES,
} from "./bench-imports.js";
export type { ComparePhasesOptions, PhaseCheck, PhaseDifference } from "./check-phases.js";
export { comparePhases, formatPhaseCheck, PhaseComparer } from "./check-phases.js";
export type { CheckTolerance } from "./check-tolerance.js";
export { checkToleranceSchema } from "./check-tolerance.js";
export type { DataFileParam } from "./data-files.js";
export { dataFileParam, dataFileParams } from "./data-files.js";
export type { Placement } from "./device-tensor.js";
export { DeviceTensor } from "./device-tensor.js";
export type { ComponentEnergy, LaunchEnergy, RunEnergy } from "./energy/summary.js";
export { launchEnergySchema, runEnergySchema } from "./energy/summary.js";
export type { Grid, GridSpec } from "./grid.js";
export type { HostPlan } from "./host-progress.js";
export { PlanEstimate } from "./host-progress.js";
export { HostSignal } from "./host-streams.js";
export type { DigestedPlugin, ManifestInputs, RunManifest, RunManifestInput } from "./manifest.js";
export {
  canonicalJson,
  completeManifest,
  manifestOf,
  pluginDigest,
  RunManifestSchema,
  runtimeVersion,
  sha256Hex,
  sourceFilesDigest,
} from "./manifest.js";
export type { HostDataMode } from "./memory/deferred-data.js";
export { DeferredTensor, deferredTensor } from "./memory/deferred-data.js";
export type { DeviceMemoryAllocatorStats, DeviceMemoryLayout } from "./memory/device-memory.js";
export { DeviceMemory } from "./memory/device-memory.js";
export type {
  Allocation,
  AllocationTensor,
  AllocatorStats,
  FreeListAllocatorOptions,
} from "./memory/free-list.js";
export { FreeListAllocator } from "./memory/free-list.js";
export type { ModelStatRow, StatMetric, StatsRow } from "./model-stats.js";
export {
  BUILTIN_COUNTERS,
  implCounters,
  modelStatsSchema,
  parseStatMetric,
  STAT_METRIC_PREFIX,
  statMetricValue,
  statsOfBusiestModel,
} from "./model-stats.js";
export type { Phase2Result, VerifyOutcomeOptions } from "./phase2.js";
export { replay, verifyOutcome } from "./phase2.js";
export type {
  ReferenceContext,
  ReferenceProgress,
  ReferenceProgressOptions,
} from "./reference-progress.js";
export { withReferenceProgress } from "./reference-progress.js";
export type { LaunchRecord, RunResults } from "./results.js";
export { RunResultsSchema } from "./results.js";
export type { LaunchRoofline } from "./roofline-results.js";
export { rooflineSchema } from "./roofline-results.js";
export type {
  CoreSimulatorOptions,
  RunBenchCoreOptions,
  RunBenchResult,
  RunWallTimes,
} from "./run-bench-core.js";
export { runBenchCore } from "./run-bench-core.js";
export type { Phase2OpLog, RunProgress } from "./run-bench-core-parts.js";
export { memoryPhase2Log } from "./run-bench-core-parts.js";
export type { LimitName, RunLimits } from "./run-limits.js";
export { DEFAULT_MAX_EVENTS, DEFAULT_MAX_STALL_CALLS, LIMIT_OPTIONS } from "./run-limits.js";
export type {
  FreeOptions,
  HostWrite,
  KernelInstance,
  LaunchOptions,
  SimulatorOptions,
} from "./simulator.js";
export { Simulator } from "./simulator.js";
export type { IssuingCall } from "./sites.js";
export { machineTracer, SiteTap } from "./sites.js";
export type { LaunchSites, SiteRow } from "./sites-results.js";
export { launchSitesSchema, siteRowSchema } from "./sites-results.js";
export type { SourceBytes, SourceFiles } from "./source-files.js";
export { importCandidates, importedSourceFiles } from "./source-files.js";
export { verificationJson } from "./verification-json.js";
