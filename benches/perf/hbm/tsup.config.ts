import { kbTsupConfig } from "@kb/tooling/tsup";

// `pnpm bench:hbm`'s bundle, dist/perf/hbm.js, built after the other perf suites (benches'
// `build` runs tsup twice): its own code bundled, the @kb packages as built. No clean, so the
// first build's bundles stay.
export default kbTsupConfig({
  entry: { "perf/hbm": "perf/hbm/run.ts" },
  platform: "node",
  dts: false,
  clean: false,
  external: [/^@kb\//],
});
