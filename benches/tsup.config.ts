import { kbTsupConfig } from "@kb/tooling/tsup";

// The perf suites run as plain node on a bundle of their own code against the built packages,
// so they measure what users install.
export default kbTsupConfig({
  entry: {
    "perf/des": "perf/des/run.ts",
    "perf/topology": "perf/topology/run.ts",
    "perf/machine": "perf/machine.ts",
    "perf/executor": "perf/executor.ts",
    "perf/ccl": "perf/ccl.ts",
    "perf/pe-gemm": "perf/pe-gemm/run.ts",
    "perf/scale": "perf/scale.ts",
    "perf/model": "perf/model.ts",
    "perf/noc": "perf/noc/run.ts",
  },
  platform: "node",
  dts: false,
  external: [/^@kb\//],
});
