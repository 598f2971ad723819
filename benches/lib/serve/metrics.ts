import type { ServeRun } from "./scheduler.js";

/**
 * The `p`-th percentile (0..100) of `values` with linear interpolation between the closest ranks
 * (numpy's default): rank `p / 100 x (n - 1)` in the sorted values, between its floor and ceiling
 * in proportion. NaN for no values.
 */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = (p / 100) * (sorted.length - 1);
  const low = Math.floor(rank);
  const high = Math.ceil(rank);
  const a = sorted[low] as number;
  return a + ((sorted[high] as number) - a) * (rank - low);
}

/** The latency figures of each request, ns. */
export interface RequestLatency {
  readonly id: number;
  /** Time to first token: the end of the step that produced it, minus the arrival. */
  readonly ttftNs: number;
  /** Time per output token after the first: (finish - first token) / (outputTokens - 1); null for one output token. */
  readonly tpotNs: number | null;
  /** End-to-end latency: finish minus arrival. */
  readonly e2eNs: number;
}

/** The run's summary: p50 / p90 / p99 of each latency, throughput and the cache. */
export interface ServeSummary {
  readonly ttft: Percentiles;
  readonly tpot: Percentiles;
  readonly e2e: Percentiles;
  /** Output tokens per second of simulated time, from the first arrival to the last finish. */
  readonly outputTokensPerS: number;
  /** Prompt and output tokens per second over the same span. */
  readonly totalTokensPerS: number;
  readonly steps: number;
  readonly preemptions: number;
  /** Largest share of the cache's blocks in use in any step. */
  readonly peakKvOccupancy: number;
  /** Simulated span, ns: first arrival to last finish. */
  readonly spanNs: number;
}

/** p50, p90 and p99 in ns. */
export interface Percentiles {
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
}

/** Each request's TTFT, TPOT and end-to-end latency. */
export function requestLatencies(run: ServeRun): RequestLatency[] {
  return run.requests.map(({ request, firstTokenNs, finishNs }) => ({
    id: request.id,
    ttftNs: firstTokenNs - request.arrivalNs,
    tpotNs: request.outputTokens > 1 ? (finishNs - firstTokenNs) / (request.outputTokens - 1) : null,
    e2eNs: finishNs - request.arrivalNs,
  }));
}

const percentiles = (values: readonly number[]): Percentiles => ({
  p50: percentile(values, 50),
  p90: percentile(values, 90),
  p99: percentile(values, 99),
});

/** The summary of a run over a cache of `kvBlocks` blocks. */
export function summarize(run: ServeRun, kvBlocks: number): ServeSummary {
  const latencies = requestLatencies(run);
  const start = Math.min(...run.requests.map((r) => r.request.arrivalNs));
  const end = Math.max(...run.requests.map((r) => r.finishNs));
  const spanNs = end - start;
  const output = run.requests.reduce((sum, r) => sum + r.request.outputTokens, 0);
  const prompt = run.requests.reduce((sum, r) => sum + r.request.promptTokens, 0);
  return {
    ttft: percentiles(latencies.map((l) => l.ttftNs)),
    tpot: percentiles(latencies.flatMap((l) => (l.tpotNs === null ? [] : [l.tpotNs]))),
    e2e: percentiles(latencies.map((l) => l.e2eNs)),
    outputTokensPerS: spanNs > 0 ? (output * 1e9) / spanNs : 0,
    totalTokensPerS: spanNs > 0 ? ((output + prompt) * 1e9) / spanNs : 0,
    steps: run.steps.length,
    preemptions: run.preemptions,
    peakKvOccupancy: Math.max(0, ...run.steps.map((s) => s.usedBlocks)) / kvBlocks,
    spanNs,
  };
}
