export type { Bench, BenchCheck, BenchOutcome, BenchReport } from "./bench.js";
export { defineBench, describeParams, isBench, parseBenchParams } from "./bench.js";
export type { ComparePhasesOptions, PhaseCheck, PhaseDifference } from "./check-phases.js";
export { comparePhases, formatPhaseCheck, PhaseComparer } from "./check-phases.js";
export type { Placement } from "./device-tensor.js";
export { DeviceTensor } from "./device-tensor.js";
export type {
  Allocation,
  AllocationTensor,
  AllocatorStats,
  DeviceMemoryAllocatorStats,
  DeviceMemoryLayout,
  FreeListAllocatorOptions,
} from "./memory/allocator.js";
export { DeviceMemory, FreeListAllocator } from "./memory/allocator.js";
export type { Phase2Result, VerifyOutcomeOptions } from "./phase2.js";
export { replay, verifyOutcome } from "./phase2.js";
export type { LaunchRecord, RunResults } from "./results.js";
export { RunResultsSchema, verificationJson } from "./results.js";
export type {
  Grid,
  GridSpec,
  HostWrite,
  KernelInstance,
  LaunchOptions,
  SimulatorOptions,
} from "./simulator.js";
export { Simulator } from "./simulator.js";
