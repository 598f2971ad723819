// `@kb/runtime/node`: what a run needs of Node (DESIGN §9): topology files, plug-ins by package
// name, host writes spilled to a temporary file. The main entry runs anywhere.

export type { LoadSimulatorOptions } from "./load-simulator.js";
export { loadSimulator } from "./load-simulator.js";
export { ResultsCache } from "./manifest-cache.js";
export type { RunManifestOptions } from "./manifest-node.js";
export { packageVersions, runManifest } from "./manifest-node.js";
export type { RunBenchOptions, RunBenchResult, RunProgress, RunWallTimes } from "./run-bench.js";
export { benchManifest, runBench } from "./run-bench.js";
