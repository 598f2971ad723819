// The reference figures (../shared/fidelity/reference.json) and the comparison with them.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** One object of reference.json (and of `bench:hbm --json`). */
export interface FidelityRecord {
  simulator: string;
  simulator_commit: string | null;
  config: string;
  pattern: string;
  mix: string;
  requests: number;
  reads: number;
  writes: number;
  outstanding: number;
  tck_ns: number;
  peak_gbs: number;
  steady_gbs: number;
  whole_gbs: number;
  pct_peak: number;
  read_lat_mean_ns: number | null;
  read_lat_p50_ns: number | null;
  read_lat_p99_ns: number | null;
  row_hit_rate: number | null;
  sim_ns: number;
  notes: string;
}

/** The reference runs, keyed `config/pattern/mix`. */
export type ReferenceTable = ReadonlyMap<string, FidelityRecord>;

export const referenceKey = (config: string, pattern: string, mix: string): string =>
  `${config}/${pattern}/${mix}`;

/** Reads `reference.json` of the fidelity folder `dir` (an empty table when there is none). */
export function loadReference(dir: string | undefined): ReferenceTable {
  const table = new Map<string, FidelityRecord>();
  if (dir === undefined) return table;
  const file = join(dir, "reference.json");
  if (!existsSync(file)) return table;
  for (const record of JSON.parse(readFileSync(file, "utf8")) as FidelityRecord[]) {
    table.set(referenceKey(record.config, record.pattern, record.mix), record);
  }
  return table;
}

/** Bandwidth within this fraction of the reference's (targets of README.md). */
export const BANDWIDTH_TOLERANCE = 0.1;
/** Mean read latency within this fraction of the reference's. */
export const LATENCY_TOLERANCE = 0.15;

/** `(ours - reference) / reference`, or null when either is missing. */
export function deviation(ours: number | null, reference: number | null | undefined): number | null {
  if (ours === null || reference === null || reference === undefined || reference === 0) return null;
  return (ours - reference) / reference;
}

/** Whether a run is an unloaded-latency run (the idle patterns: one request at a time). */
export const isIdle = (pattern: string, outstanding: number): boolean =>
  pattern.startsWith("idle") || outstanding <= 1;

/** How a run compares with its reference. */
export interface Comparison {
  readonly bandwidth: number | null;
  readonly latency: number | null;
  /** Both targets met (the idle patterns: latency only); null without a reference. */
  readonly pass: boolean | null;
}

/** Compares `ours` with `reference` against the targets. */
export function compare(ours: FidelityRecord, reference: FidelityRecord | undefined): Comparison {
  if (reference === undefined) return { bandwidth: null, latency: null, pass: null };
  const bandwidth = deviation(ours.steady_gbs, reference.steady_gbs);
  const latency = deviation(ours.read_lat_mean_ns, reference.read_lat_mean_ns);
  const latencyOk = latency === null || Math.abs(latency) <= LATENCY_TOLERANCE;
  const bandwidthOk =
    isIdle(ours.pattern, ours.outstanding) ||
    bandwidth === null ||
    Math.abs(bandwidth) <= BANDWIDTH_TOLERANCE;
  return { bandwidth, latency, pass: latencyOk && bandwidthOk };
}
