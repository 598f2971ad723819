import { kbTsupConfig } from "@kb/tooling/tsup";

// The pages are browser bundles: main.js (a run's page) and sweep-main.js (a sweep's page, kb web
// RESULTS.jsonl), the libraries included, nothing from a CDN, with index.html, sweep.html and
// style.css copied from src/public. `kb web` serves dist/ as it is.
export default kbTsupConfig({
  entry: ["src/main.ts", "src/sweep-main.ts"],
  platform: "browser",
  target: "es2022",
  dts: false,
  minify: true,
  // No source map: the page ships inside @kb/cli, and a map of the libraries is 5 MB.
  sourcemap: false,
  treeshake: false,
  noExternal: [/.*/],
  publicDir: "src/public",
  define: { "process.env.NODE_ENV": '"production"' },
});
