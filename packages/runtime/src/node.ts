// `@kb/runtime/node`: what a run needs of Node (DESIGN §9): topology files, plug-ins by package
// name, host writes spilled to a temporary file. The main entry runs anywhere.

export type { BenchCheckResult, BenchDiagnostic, CheckBenchOptions } from "./node/check-bench.js";
export { checkBench } from "./node/check-bench.js";
export { readDataFiles } from "./node/data-files-node.js";
export type { LoadSimulatorOptions } from "./node/load-simulator.js";
export { loadSimulator } from "./node/load-simulator.js";
export type { CacheLookup } from "./node/manifest-cache.js";
export { cacheEntryResults, ResultsCache, resultsText } from "./node/manifest-cache.js";
export type { RunManifestOptions } from "./node/manifest-node.js";
export { packageVersions, runManifest } from "./node/manifest-node.js";
export { PLUGIN_SHARED_MODULES } from "./node/plugin-modules.js";
export type { RunBenchOptions } from "./node/run-bench.js";
export { benchManifest, runBench } from "./node/run-bench.js";
// The code a run loads, read and digested for the manifest, a sweep's point keys and a worker's checks.
export {
  benchFileDigest,
  benchFiles,
  folderSourceFiles,
  pluginCodeDigest,
  pluginSourceDigest,
} from "./node/source-files-node.js";
// Kernels' tl calls tagged with their place in the source when a bench file is loaded.
export type { CallSiteTagger } from "./node/tag-call-sites.js";
export { callSiteTransform } from "./node/tag-call-sites.js";
// Re-exported for code written before they moved to the main entry with runBenchCore.
export type { RunBenchResult, RunWallTimes } from "./run-bench-core.js";
export type { RunProgress } from "./run-bench-core-parts.js";
