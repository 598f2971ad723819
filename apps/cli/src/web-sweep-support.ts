import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { kb } from "./test-support.js";

// The sweep the tests of `kb web results.jsonl` look at: kb sweep over the copy bench of the
// kb run tests, rows [32, 256] x dtype [f16, f32, f64], with a results cache. f64 is not a dtype
// the bench takes: its two points fail (no digest, no cached run); the four others run in about
// a second each.

const root = fileURLToPath(new URL("../../../", import.meta.url));

/** The built kb, which kb sweep runs each point with (the tests skip without it). */
export const builtKb = join(root, "apps", "cli", "dist", "bin.js");
export const haveBuiltKb = existsSync(builtKb);

/** A finished small sweep: its results table, topologies beside it, and its results cache. */
export interface SmallSweep {
  readonly table: string;
  readonly cache: string;
}

/** Runs the small sweep into `dir` (`dir/out/results.jsonl`, `dir/cache`). */
export async function runSmallSweep(dir: string): Promise<SmallSweep> {
  mkdirSync(dir, { recursive: true });
  const spec = join(dir, "sweep.yaml");
  writeFileSync(
    spec,
    [
      "name: copy",
      `bench: ${join(root, "apps", "cli", "src", "__fixtures__", "copy-bench.ts")}`,
      `topology: ${join(root, "topologies", "default.yaml")}`,
      "axes:",
      "  rows: { path: params.rows, values: [32, 256] }",
      "  dtype: { path: params.dtype, values: [f16, f32, f64] }",
      "metrics:",
      "  time_ns: simTimeNs",
      "  hbm_bw: achieved.hbmBytesPerS",
      "  hbm_bytes: work.hbmBytes",
      "",
    ].join("\n"),
  );
  const out = join(dir, "out");
  const cache = join(dir, "cache");
  const run = await kb("sweep", spec, "--out", out, "--cache", cache, "--jobs", "2");
  if (run.code !== 0 || !run.stdout.includes("4 ok, 2 failed")) {
    throw new Error(`the small sweep did not give 4 ok and 2 failed points:\n${run.stdout}${run.stderr}`);
  }
  return { table: join(out, "results.jsonl"), cache };
}
