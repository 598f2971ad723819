import { dirname, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { TraceRecorder, type Tracer } from "@kb/components";
import type { VerifyReport } from "@kb/data-executor";
import { isKbError, KbError } from "@kb/errors";
import { MemorySink, OpLogger, type OpLogSink, type OpRecord } from "@kb/oplog";
import { SpillSink } from "@kb/oplog/node";
import type { TopologyInput } from "@kb/topology";
import { type Bench, type BenchOutcome, parseBenchParams } from "../bench.js";
import { type PhaseCheck, PhaseComparer } from "../check-phases.js";
import type { RunManifest } from "../manifest.js";
import { replay, verifyOutcome } from "../phase2.js";
import { type ReferenceProgress, withReferenceProgress } from "../reference-progress.js";
import type { RunResults } from "../results.js";
import type { RunLimits } from "../run-limits.js";
import type { Simulator } from "../simulator.js";
import { verificationJson } from "../verification-json.js";
import { loadSimulator } from "./load-simulator.js";
import { runManifest } from "./manifest-node.js";

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

/** What {@link runBench} reports as it goes. */
export type RunProgress =
  | { readonly stage: "build" }
  /** Phase 1, every 4096 trace records at most: simulated time and DES events so far. */
  | { readonly stage: "phase1"; readonly simTimeNs: number; readonly events: number }
  | { readonly stage: "phase2"; readonly done: number; readonly total: number }
  | { readonly stage: "reference"; readonly reference: ReferenceProgress }
  | { readonly stage: "compare" };

/** What {@link runBench} returns. */
export interface RunBenchResult {
  /** The results JSON (`RunResultsSchema`), with the manifest: the same inputs give the same bytes. */
  readonly results: RunResults;
  readonly manifest: RunManifest;
  /** What the bench's run returned (its checks and report). */
  readonly outcome: BenchOutcome | undefined;
  /** The verification (`verify`), else null. */
  readonly verification: VerifyReport | null;
  /** The phase check (`checkPhases`), else null. */
  readonly phaseCheck: PhaseCheck | null;
  /** The trace (`trace`), else null. */
  readonly recorder: TraceRecorder | null;
  /** Op records phase 2 replayed (0 without phase 2). */
  readonly phase2Ops: number;
  /** True unless the verification failed or the phases differ. */
  readonly passed: boolean;
  /** Wall times, ms: for printing only, never in the results. */
  readonly wall: RunWallTimes;
}

/** Wall times of a run's stages, ms. */
export interface RunWallTimes {
  readonly buildMs: number;
  readonly runMs: number;
  readonly phase2Ms: number;
  /** References and comparison together. */
  readonly checkMs: number;
  readonly referenceMs: number;
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
  const { bench, onProgress } = options;
  const params = parseBenchParams(bench, options.params ?? {}) as Record<string, unknown>;
  const checkPhases = options.checkPhases === true;
  const verify = options.verify === true;
  const manifest = options.manifest ?? (await benchManifest(options));
  const phase2Log = verify || checkPhases ? phase2LogFor(checkPhases) : null;
  const fileSink = options.opLogSink ?? null;
  const sink =
    phase2Log !== null && fileSink !== null
      ? teeSink(phase2Log.sink, fileSink)
      : (phase2Log?.sink ?? fileSink);
  const logger = sink === null ? null : new OpLogger(sink);
  const recorder =
    options.trace === undefined
      ? null
      : new TraceRecorder(
          options.trace.counterIntervalNs === undefined
            ? {}
            : { counterIntervalNs: options.trace.counterIntervalNs },
        );
  try {
    onProgress?.({ stage: "build" });
    const tap = onProgress === undefined ? null : new ProgressTap(recorder, onProgress);
    const buildStart = performance.now();
    const sim = await loadSimulator(options.topology, {
      plugins: options.plugins ?? [],
      opLogger: logger,
      tracer: tap ?? recorder,
      checkPhases,
      limits: options.limits ?? {},
    });
    tap?.start(sim);
    const runStart = performance.now();
    const outcome = await runUserCode(options.benchFile, bench, sim, params);
    const runEnd = performance.now();
    let results: RunResults = sim.results(bench.name, params);
    if (outcome?.report !== undefined) {
      const { title, columns, rows } = outcome.report;
      results = { ...results, report: { title, columns: [...columns], rows: rows.map((row) => [...row]) } };
    }
    await logger?.close();
    let verification: VerifyReport | null = null;
    let phaseCheck: PhaseCheck | null = null;
    let phase2Ms = 0;
    let checkMs = 0;
    let referenceMs = 0;
    if (phase2Log !== null) {
      const total = phase2Log.count();
      onProgress?.({ stage: "phase2", done: 0, total });
      const phase2Start = performance.now();
      // One replay serves verify and checkPhases: the comparer reads each observed load's bytes as
      // its dma_read runs, the verification reads the outputs from the store at the end.
      const comparer =
        phase2Log.kept !== null ? new PhaseComparer(sim.loadObservations, phase2Log.kept) : null;
      const phase2 = replay(sim.hostWrites, phase2Log.records(), {
        onProgress:
          onProgress === undefined ? null : (done: number) => onProgress({ stage: "phase2", done, total }),
        onExecuted: comparer?.onExecuted ?? null,
      });
      phase2Ms = performance.now() - phase2Start;
      if (comparer !== null) {
        phaseCheck = comparer.result();
        results = { ...results, phaseCheck };
      }
      if (verify) {
        onProgress?.({ stage: "compare" });
        const checkStart = performance.now();
        const watched = withReferenceProgress(outcome, (reference) => {
          if (reference.done) referenceMs += reference.elapsedMs;
          onProgress?.({ stage: "reference", reference });
        });
        verification = await verifyOutcome(watched, phase2.store, {
          firstNonFinite: phase2.executor.firstNonFinite,
        });
        checkMs = performance.now() - checkStart;
        results = { ...results, verification: verificationJson(verification) };
      }
    }
    results = { ...results, manifest };
    return {
      results,
      manifest,
      outcome,
      verification,
      phaseCheck,
      recorder,
      phase2Ops: phase2Log?.count() ?? 0,
      passed: verification?.pass !== false && phaseCheck?.firstDifference == null,
      wall: { buildMs: runStart - buildStart, runMs: runEnd - runStart, phase2Ms, checkMs, referenceMs },
    };
  } catch (error) {
    logger?.abort();
    throw error;
  } finally {
    phase2Log?.dispose();
  }
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

/**
 * The run options that change the results JSON: part of the manifest. Limits are not: a run
 * that reaches one stops with an error and has no results, one that does not is unchanged.
 */
function resultOptions(options: RunBenchOptions): Record<string, unknown> {
  return {
    ...(options.verify === true ? { verify: true } : {}),
    ...(options.checkPhases === true ? { checkPhases: true } : {}),
  };
}

/**
 * Runs the bench's own code. A plain error thrown there (not a `KbError`) is the bench's fault
 * when it was thrown in the bench's directory: `RUNTIME_INVALID` with its stack; thrown inside kb,
 * it stays as it is (an internal error).
 */
async function runUserCode(
  file: string,
  bench: Bench,
  sim: Simulator,
  params: Record<string, unknown>,
): Promise<BenchOutcome | undefined> {
  try {
    return (await bench.run(sim, params)) ?? undefined;
  } catch (error) {
    if (isKbError(error) || !thrownUnder(error, dirname(file))) throw error;
    throw new KbError("RUNTIME_INVALID", `bench "${bench.name}" threw: ${errorText(error)}`, {
      context: { file },
      cause: error,
    });
  }
}

/** Whether the top frame of `error`'s stack is a file under `dir`. */
function thrownUnder(error: unknown, dir: string): boolean {
  if (!(error instanceof Error) || error.stack === undefined) return false;
  const frame = /^\s+at (?:.*? \()?(.+?):\d+:\d+\)?$/m.exec(error.stack)?.[1];
  if (frame === undefined) return false;
  const path = frame.startsWith("file://") ? fileURLToPath(frame) : frame;
  return path.startsWith(`${dir}${sep}`);
}

/** A thrown value as text: a KbError's message, an Error's stack (it points into the user's file). */
function errorText(error: unknown): string {
  if (isKbError(error)) return error.message;
  if (error instanceof Error) return error.stack ?? `${error.name}: ${error.message}`;
  return String(error);
}

/**
 * A tracer between the machine and the trace recorder that reports phase 1's progress every 4096
 * records. It adds no simulation events, so a run's results are the same with or without it.
 */
class ProgressTap implements Tracer {
  private sim: Simulator | null = null;
  private calls = 0;

  constructor(
    private readonly inner: Tracer | null,
    private readonly onProgress: (progress: RunProgress) => void,
  ) {}

  start(sim: Simulator): void {
    this.sim = sim;
    this.onProgress({ stage: "phase1", simTimeNs: 0, events: 0 });
  }

  record(...args: Parameters<Tracer["record"]>): void {
    this.inner?.record(...args);
    if ((++this.calls & 4095) !== 0 || this.sim === null) return;
    this.onProgress({
      stage: "phase1",
      simTimeNs: args[1],
      events: this.sim.machine.env.processedEventCount,
    });
  }

  counter(name: string, tNs: number, componentId: string, value: number): void {
    this.inner?.counter?.(name, tNs, componentId, value);
  }

  onFlush(hook: () => void): void {
    this.inner?.onFlush?.(hook);
  }
}

/** The op log phase 2 replays in this process, and how it is kept. */
interface Phase2Log {
  readonly sink: OpLogSink;
  /** Every record in memory (checkPhases matches loads by record id), else null. */
  readonly kept: readonly OpRecord[] | null;
  count(): number;
  /** The records in id order, once the logger is closed. */
  records(): Iterable<OpRecord>;
  dispose(): void;
}

/**
 * `checkPhases` keeps the records in memory (its comparer indexes them by id); `verify` alone
 * streams them to a temporary file past 131 072 records (`SpillSink`), so a long run's log costs
 * disk, not memory, and the replay holds one chunk at a time.
 */
function phase2LogFor(checkPhases: boolean): Phase2Log {
  if (checkPhases) {
    const sink = new MemorySink();
    return {
      sink,
      kept: sink.records,
      count: () => sink.records.length,
      records: () => sink.records,
      dispose: () => {},
    };
  }
  const sink = new SpillSink();
  return {
    sink,
    kept: null,
    count: () => sink.recordCount,
    records: () => sink.records(),
    dispose: () => sink.dispose(),
  };
}

/** An op-log sink writing to two sinks (phase 2's and the caller's file). */
function teeSink(first: OpLogSink, second: OpLogSink): OpLogSink {
  return {
    write(record) {
      first.write(record);
      second.write(record);
    },
    async close() {
      await first.close?.();
      await second.close?.();
    },
    abort() {
      first.abort?.();
      second.abort?.();
    },
  };
}
