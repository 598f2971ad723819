import type { BenchReport, BenchSeries } from "@kb/runtime";
import { summarize } from "./metrics.js";
import type { ServeRun, StepRecord } from "./scheduler.js";

/** The columns of {@link serveReport}'s table. */
export const SERVE_REPORT_COLUMNS = ["figure", "value", "unit"] as const;

const round = (value: number, digits = 3) => (Number.isFinite(value) ? Number(value.toFixed(digits)) : "n/a");

/**
 * The serving loop's report: a table of figures (TTFT, TPOT and end-to-end latency at p50 / p90 /
 * p99 in µs, throughput, steps, preemptions, peak KV occupancy, the share of the simulated launches'
 * time under each verdict rule, `boundNs`) and three series over simulated
 * time, one point per step from its start (and 0 from a step's end where the loop then idles or ends):
 * `KV cache occupancy` (% of the blocks in use once the step's tokens have their slots), `batch`
 * (sequences in the step) and `batch tokens` (tokens the step computes).
 */
export function serveReport(
  title: string,
  run: ServeRun,
  kvBlocks: number,
  boundNs: ReadonlyMap<string, number> = new Map(),
): BenchReport {
  const summary = summarize(run, kvBlocks);
  const rows: (string | number)[][] = [];
  for (const [name, figures] of [
    ["TTFT", summary.ttft],
    ["TPOT", summary.tpot],
    ["end-to-end latency", summary.e2e],
  ] as const) {
    for (const p of ["p50", "p90", "p99"] as const)
      rows.push([`${name} ${p}`, round(figures[p] / 1000), "us"]);
  }
  const sequences = run.steps.reduce((sum, step) => sum + step.items.length, 0);
  rows.push(
    ["output throughput", round(summary.outputTokensPerS, 1), "tokens/s"],
    ["prompt + output throughput", round(summary.totalTokensPerS, 1), "tokens/s"],
    ["requests", run.requests.length, ""],
    ["steps", summary.steps, ""],
    ["mean batch", round(run.steps.length > 0 ? sequences / run.steps.length : 0), "sequences"],
    ["preemptions (recompute)", summary.preemptions, ""],
    ["peak KV cache occupancy", round(summary.peakKvOccupancy * 100, 1), "% of blocks"],
    ["simulated span", round(summary.spanNs / 1000), "us"],
  );
  const kernelNs = [...boundNs.values()].reduce((sum, ns) => sum + ns, 0);
  for (const [rule, ns] of [...boundNs].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))) {
    rows.push([`kernel time bound by ${rule}`, round((ns * 100) / kernelNs, 1), "% of simulated launches"]);
  }
  // One point per step from its start; where the loop idles (nothing running until the next
  // arrival) and after the last step, a point of 0 from the step's end.
  const x: number[] = [];
  const at: (number | null)[] = []; // the step of each point, null for an idle one
  for (const [i, step] of run.steps.entries()) {
    x.push(step.startNs);
    at.push(i);
    const next = run.steps[i + 1];
    if (next === undefined || next.startNs > step.endNs) {
      x.push(step.endNs);
      at.push(null);
    }
  }
  const series = (name: string, unit: string, of: (step: StepRecord) => number): BenchSeries => ({
    name,
    unit,
    x,
    y: at.map((i) => (i === null ? 0 : of(run.steps[i] as StepRecord))),
  });
  return {
    title,
    columns: [...SERVE_REPORT_COLUMNS],
    rows,
    series: [
      series("KV cache occupancy", "% of blocks", (step) => (step.usedBlocks * 100) / kvBlocks),
      series("batch", "sequences", (step) => step.items.length),
      series("batch tokens", "tokens", (step) => step.items.reduce((sum, item) => sum + item.tokens, 0)),
    ],
  };
}
