import { dirname, sep } from "node:path";
import { fileURLToPath } from "node:url";
import type { OpLogSink } from "@kb/oplog";
import { SpillSink } from "@kb/oplog/node";
import type { TopologyInput } from "@kb/topology";
import { type Bench, parseBenchParams } from "../bench.js";
import type { RunManifest } from "../manifest.js";
import type { HostDataMode } from "../memory/deferred-data.js";
import { type RunBenchResult, resultOptions, runBenchCore } from "../run-bench-core.js";
import type { Phase2OpLog, RunProgress } from "../run-bench-core-parts.js";
import type { RunLimits } from "../run-limits.js";
import { loadSimulator } from "./load-simulator.js";
import { runManifest } from "./manifest-node.js";

// runBench: `runBenchCore` (../run-bench-core.ts) with files, on Node.

/** Options of {@link runBench}. */
export interface RunBenchOptions {
  /** The bench (the default export of its file, loaded by the caller). */
  readonly bench: Bench;
  /**
   * Its file: its bytes are the bench's digest in the manifest, and a plain error thrown from its
   * folder is the bench's (`RUNTIME_INVALID` naming it), not kb's.
   */
  readonly benchFile: string;
  /** A topology file path (its `plugins:` loaded), or a topology object. */
  readonly topology: string | TopologyInput;
  /**
   * Params as a command line gives them (`key=value` strings, JSON where it parses) or values;
   * checked with the bench's schema (`parseBenchParams`), defaults filled in.
   */
  readonly params?: Readonly<Record<string, string | number | boolean>>;
  /** Plug-ins beyond the topology's own: package names or paths from the current directory. */
  readonly plugins?: readonly string[];
  /** Run phase 2 and check the bench's outputs against its references. */
  readonly verify?: boolean;
  /** Run phase 2 and compare every value a kernel observed in phase 1 with phase 2's. */
  readonly checkPhases?: boolean;
  /** What copies of deferred tensors do with their bytes (default as `runBenchCore`'s). */
  readonly hostData?: HostDataMode;
  readonly limits?: RunLimits;
  /** Record a Chrome trace: the recorder comes back in the result. Absent: no trace. */
  readonly trace?: { readonly counterIntervalNs?: number } | undefined;
  /** A sink that also gets every op record (the `--oplog` file); closed, or aborted on failure. */
  readonly opLogSink?: OpLogSink | null;
  /** Package versions for the manifest (default: `@kb/runtime`'s and its dependencies'). */
  readonly packages?: Readonly<Record<string, string>>;
  /** The run's manifest when the caller made it already ({@link runManifest}, for a cache lookup). */
  readonly manifest?: RunManifest | undefined;
  /** Called as the run goes: the caller shows it (a progress line) or not. */
  readonly onProgress?: ((progress: RunProgress) => void) | undefined;
}

/**
 * Runs a bench: builds the machine of the topology, runs the bench (phase 1) with the op log and
 * trace it needs, replays the op log (phase 2) when `verify` or `checkPhases` asks, verifies,
 * and returns the results JSON with the run's manifest. The one orchestration of a run: `kb run`,
 * the sweep workers and tests call it. Files: it reads the bench and topology files and the
 * plug-ins, and spills a long op log to a temporary file (removed); the trace and op-log files
 * are the caller's (`recorder`, `opLogSink`).
 *
 * Throws the bench's bad params, the topology's and plug-ins' errors, `RUN_LIMIT`, and what the
 * bench throws (a plain error from the bench's folder as `RUNTIME_INVALID`).
 */
export async function runBench(options: RunBenchOptions): Promise<RunBenchResult> {
  // Params first: bad ones are refused before the manifest reads any file.
  parseBenchParams(options.bench, options.params ?? {});
  const manifest = options.manifest ?? (await benchManifest(options));
  const benchDir = dirname(options.benchFile);
  return runBenchCore({
    bench: options.bench,
    ...(options.params !== undefined ? { params: options.params } : {}),
    simulator: (simulatorOptions) =>
      loadSimulator(options.topology, { ...simulatorOptions, plugins: options.plugins ?? [] }),
    manifest,
    verify: options.verify === true,
    checkPhases: options.checkPhases === true,
    ...(options.hostData !== undefined ? { hostData: options.hostData } : {}),
    ...(options.limits !== undefined ? { limits: options.limits } : {}),
    trace: options.trace,
    opLogSink: options.opLogSink ?? null,
    phase2Log: spilledPhase2Log,
    benchFile: options.benchFile,
    isUserError: (error) => thrownUnder(error, benchDir),
    onProgress: options.onProgress,
  });
}

/**
 * The manifest of the run `options` describe, without running it (`kb run --manifest-only`, a
 * cache lookup before the run): what {@link runBench} puts in the results.
 */
export function benchManifest(options: RunBenchOptions): Promise<RunManifest> {
  return runManifest({
    bench: options.bench,
    benchFile: options.benchFile,
    topology: options.topology,
    params: parseBenchParams(options.bench, options.params ?? {}) as Record<string, unknown>,
    plugins: options.plugins ?? [],
    options: resultOptions(options),
    ...(options.packages !== undefined ? { packages: options.packages } : {}),
  });
}

/** Whether the top frame of `error`'s stack is a file under `dir`. */
function thrownUnder(error: unknown, dir: string): boolean {
  if (!(error instanceof Error) || error.stack === undefined) return false;
  const frame = /^\s+at (?:.*? \()?(.+?):\d+:\d+\)?$/m.exec(error.stack)?.[1];
  if (frame === undefined) return false;
  const path = frame.startsWith("file://") ? fileURLToPath(frame) : frame;
  return path.startsWith(`${dir}${sep}`);
}

/**
 * Phase 2's op log for `verify` alone: streamed to a temporary file past 131 072 records
 * (`SpillSink`), so a long run's log costs disk, not memory, and the replay holds one chunk at a time.
 */
function spilledPhase2Log(): Phase2OpLog {
  const sink = new SpillSink();
  return {
    sink,
    count: () => sink.recordCount,
    records: () => sink.records(),
    dispose: () => sink.dispose(),
  };
}
