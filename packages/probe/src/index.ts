// @kb/probe: `kb probe` (runProbe: a model held to its stated formula on a topology) and
// MemoryHarness (one memory model driven alone), the plug-in author's test kit.
export type { HarnessResult, MemoryHarnessOptions } from "./memory-harness.js";
export { MemoryHarness } from "./memory-harness.js";
export type {
  ProbeCase,
  ProbeGemmCase,
  ProbeInvariant,
  ProbeLayout,
  ProbeOptions,
  ProbePlacement,
  ProbeReport,
  ProbeSweepPoint,
} from "./probe.js";
export { fabricRoute, PROBE_BYTES, PROBE_UNCONTENDED_TOLERANCE, runProbe, sweepPoints } from "./probe.js";
