// One run of `pnpm bench:hbm` as a record: reference.json's fields, the comparison with the
// reference and the run's speed (what --json writes and the tables print).
import { execFileSync } from "node:child_process";
import { performance } from "node:perf_hooks";
import type { BenchConfig } from "./configs.js";
import type { RunFigures } from "./driver.js";
import type { EnergyRecord } from "./energy.js";
import { type Comparison, compare, type FidelityRecord } from "./reference.js";
import type { Trace } from "./trace.js";
import type { WholeMachineFigures } from "./whole-machine.js";

/** One run's record: reference.json's fields plus what kernbench adds. */
export interface BenchRecord extends FidelityRecord {
  impl: string;
  status: string;
  /** HBM core energy (--energy, --dram-trace; hbm_ctrl_v2 runs only). */
  energy?: EnergyRecord;
  /** Requests per wall-clock second of the closed loop (trace loading and machine building excluded). */
  lines_per_s: number;
  wall_s: number;
  /** The process's CPU seconds over the same span (the speed on a busy machine). */
  cpu_s: number;
  reference: {
    steady_gbs: number;
    read_lat_mean_ns: number | null;
    read_lat_p99_ns: number | null;
    row_hit_rate: number | null;
  } | null;
  deviation: { steady_gbs: number | null; read_lat_mean_ns: number | null; pass: boolean | null };
  whole_machine?: {
    memory_lat_mean_ns: number | null;
    memory_lat_p50_ns: number | null;
    memory_lat_p99_ns: number | null;
    fabric_share: number | null;
    requesters: readonly string[];
    busiest_component: { id: string; busy: number } | null;
    busiest_link: { id: string; busy: number } | null;
  };
}

/** Starts a wall-clock and CPU stopwatch; calling the result reads both, in seconds. */
export function startClock(): () => { wallS: number; cpuS: number } {
  const wall = performance.now();
  const cpu = process.cpuUsage();
  return () => {
    const used = process.cpuUsage(cpu);
    return { wallS: (performance.now() - wall) / 1000, cpuS: (used.user + used.system) / 1e6 };
  };
}

/** The repository's commit (12 hex digits), or null outside a git work tree. */
export function gitCommit(): string | null {
  try {
    return execFileSync("git", ["rev-parse", "--short=12", "HEAD"], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    }).trim();
  } catch {
    return null;
  }
}

/** The record of one run of `trace` on `config`, compared with `reference` when there is one. */
export function record(
  config: BenchConfig,
  trace: Trace,
  impl: string,
  figures: RunFigures | WholeMachineFigures,
  wallS: number,
  cpuS: number,
  note: string | null,
  reference: FidelityRecord | undefined,
  commit: string | null,
): BenchRecord {
  const base: FidelityRecord = {
    simulator: "kernbench",
    simulator_commit: commit,
    config: config.name,
    pattern: trace.pattern,
    mix: trace.mix,
    requests: figures.requests,
    reads: figures.reads,
    writes: figures.writes,
    outstanding: figures.outstanding,
    tck_ns: figures.tck_ns,
    peak_gbs: figures.peak_gbs,
    steady_gbs: figures.steady_gbs,
    whole_gbs: figures.whole_gbs,
    pct_peak: figures.pct_peak,
    read_lat_mean_ns: figures.read_lat_mean_ns,
    read_lat_p50_ns: figures.read_lat_p50_ns,
    read_lat_p99_ns: figures.read_lat_p99_ns,
    row_hit_rate: figures.row_hit_rate,
    sim_ns: figures.sim_ns,
    notes: [
      `impl=${impl}`,
      ...(note === null ? [] : [note]),
      `trace=${trace.source}`,
      ...("t10_ns" in figures
        ? [
            `t10=${figures.t10_ns.toFixed(1)}ns t90=${figures.t90_ns.toFixed(1)}ns`,
            `refusals=${figures.refusals}`,
            `ticks visited=${figures.ticks_visited}`,
          ]
        : []),
      "latency from acceptance at the memory to the last data leaving it; writes complete at acceptance (posted)",
    ].join("; "),
  };
  for (const key of ROUNDED) {
    const value = base[key];
    if (typeof value === "number") (base as unknown as Record<string, number>)[key] = round(value);
  }
  const comparison: Comparison = compare(base, reference);
  return {
    ...base,
    impl,
    status: config.meta.status,
    lines_per_s: wallS > 0 ? Math.round(figures.requests / wallS) : 0,
    wall_s: round(wallS),
    cpu_s: round(cpuS),
    reference:
      reference === undefined
        ? null
        : {
            steady_gbs: reference.steady_gbs,
            read_lat_mean_ns: reference.read_lat_mean_ns,
            read_lat_p99_ns: reference.read_lat_p99_ns,
            row_hit_rate: reference.row_hit_rate,
          },
    deviation: {
      steady_gbs: comparison.bandwidth,
      read_lat_mean_ns: comparison.latency,
      pass: comparison.pass,
    },
  };
}

/** Figures written with 6 significant digits (as reference.json). */
const ROUNDED = [
  "steady_gbs",
  "whole_gbs",
  "pct_peak",
  "read_lat_mean_ns",
  "read_lat_p50_ns",
  "read_lat_p99_ns",
  "row_hit_rate",
  "sim_ns",
] as const;
const round = (value: number): number =>
  Number.isFinite(value) && value !== 0 ? Number(value.toPrecision(6)) : value;
