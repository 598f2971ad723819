import { kbTsupConfig } from "@kb/tooling/tsup";

// The parallel-DES study's scripts (benches/perf/pdes/README.md), bundled as the other perf
// suites are (their own code, the @kb packages as built), built on demand:
//   cd benches && npx tsup --config perf/pdes/tsup.config.ts
// No clean, so the other suites' bundles stay.
export default kbTsupConfig({
  entry: {
    "perf/pdes-record": "perf/pdes/record.ts",
    "perf/pdes-analyze": "perf/pdes/analyze.ts",
    "perf/pdes-pingpong": "perf/pdes/pingpong.ts",
    "perf/pdes-prototype": "perf/pdes/prototype.ts",
    "perf/pdes-cpu-share": "perf/pdes/cpu-share.ts",
  },
  platform: "node",
  dts: false,
  clean: false,
  external: [/^@kb\//],
});
