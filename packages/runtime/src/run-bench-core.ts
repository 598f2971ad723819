import { type KbPlugin, TraceRecorder } from "@kb/components";
import type { VerifyReport } from "@kb/data-executor";
import { KbError } from "@kb/errors";
import { OpLogger, type OpLogSink } from "@kb/oplog";
import {
  expandTopology,
  parseTopology,
  resolveTopology,
  type Topology,
  type TopologyInput,
} from "@kb/topology";
import { type Bench, type BenchOutcome, parseBenchParams } from "./bench.js";
import { type PhaseCheck, PhaseComparer } from "./check-phases.js";
import { checkOutcomeTolerances } from "./check-tolerance.js";
import { manifestOf, type RunManifest } from "./manifest.js";
import { checkHostDataMode, type HostDataMode } from "./memory/deferred-data.js";
import { replay, verifyOutcome } from "./phase2.js";
import { withReferenceProgress } from "./reference-progress.js";
import type { RunResults } from "./results.js";
import {
  memoryPhase2Log,
  type Phase2OpLog,
  ProgressTap,
  type RunProgress,
  runUserCode,
  teeSink,
  withReferenceErrors,
} from "./run-bench-core-parts.js";
import type { RunLimits } from "./run-limits.js";
import { Simulator } from "./simulator.js";
import type { SimulatorOptions } from "./simulator-options.js";
import type { SourceFiles } from "./source-files.js";
import { verificationJson } from "./verification-json.js";

/** What {@link runBenchCore} passes a simulator factory: the op logger, tracer, phase check and limits. */
export type CoreSimulatorOptions = Pick<
  SimulatorOptions,
  "opLogger" | "tracer" | "checkPhases" | "limits" | "hostData"
>;

/**
 * Options of {@link runBenchCore}. The machine comes from `topology` (with loaded `plugins`) or
 * from a `simulator` factory; the manifest is given (`manifest`) or made from `topology` and
 * `benchSource`.
 */
export interface RunBenchCoreOptions {
  /** The bench (its module already evaluated by the caller). */
  readonly bench: Bench;
  /**
   * Params as a command line gives them (`key=value` strings, JSON where it parses) or values;
   * checked with the bench's schema (`parseBenchParams`), defaults filled in.
   */
  readonly params?: Readonly<Record<string, string | number | boolean>>;
  /** The topology as YAML text or an object (not a file path: files are `@kb/runtime/node`'s). */
  readonly topology?: string | TopologyInput;
  /** What YAML errors of a `topology` text are located at (`name:line:col`; default `<topology>`). */
  readonly topologyName?: string;
  /** Loaded plug-ins, the topology's `plugins:` among them (matched by `meta.name`). */
  readonly plugins?: readonly KbPlugin[];
  /** Builds the machine instead of `topology` (`loadSimulator` on Node); `manifest` is then needed. */
  readonly simulator?: (options: CoreSimulatorOptions) => Promise<Simulator>;
  /** The run's manifest when the caller made it already (a cache lookup, topology files). */
  readonly manifest?: RunManifest | undefined;
  /**
   * The bench's code, for the manifest's bench digest (without `manifest`): its file's text or
   * bytes, or, for a bench that imports files by relative path, it and those files by relative
   * path (`importedSourceFiles`, as the playground and `kb run` find them).
   */
  readonly benchSource?: string | Uint8Array | SourceFiles;
  /** Package versions for the manifest (without `manifest`; default none). */
  readonly packages?: Readonly<Record<string, string>>;
  /** The manifest's `node` field (without `manifest`; default `runtimeVersion()`). */
  readonly runtime?: string;
  /** Run phase 2 and check the bench's outputs against its references. */
  readonly verify?: boolean;
  /** Run phase 2 and compare every value a kernel observed in phase 1 with phase 2's. */
  readonly checkPhases?: boolean;
  /**
   * What copies of the bench's deferred tensors (`deferredTensor`) do with their bytes. Default:
   * `full` with `verify` or `checkPhases` (phase 2 needs the bytes), else `timing-only` (the same
   * simulated times without the memory). `timing-only` with `verify` or `checkPhases` is refused.
   */
  readonly hostData?: HostDataMode;
  readonly limits?: RunLimits;
  /** Record a Chrome trace: the recorder comes back in the result. Absent: no trace. */
  readonly trace?: { readonly counterIntervalNs?: number } | undefined;
  /** A sink that also gets every op record (an op-log file or download); closed, or aborted on failure. */
  readonly opLogSink?: OpLogSink | null;
  /**
   * Keeps the op log phase 2 replays for `verify` without `checkPhases` (which always keeps it in
   * memory). Default: in memory ({@link memoryPhase2Log}); Node spills it to a temporary file.
   */
  readonly phase2Log?: () => Phase2OpLog;
  /** The bench's file as errors name it (a path, a playground's virtual path). */
  readonly benchFile?: string;
  /**
   * Whether a plain error (not a `KbError`) the bench threw came from the user's code: then it is
   * the bench's fault, `RUNTIME_INVALID` with its stack; else it stays as it is (a bug in kb).
   * Default: never.
   */
  readonly isUserError?: (error: unknown) => boolean;
  /** Called as the run goes: the caller shows it (a progress line, a page) or not. */
  readonly onProgress?: ((progress: RunProgress) => void) | undefined;
}

/** What {@link runBenchCore} (and `runBench` of `@kb/runtime/node`) returns. */
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
 * Runs a bench, on any platform: builds the machine, runs the bench (phase 1) with the op log and
 * trace it needs, replays the op log (phase 2) when `verify` or `checkPhases` asks, verifies, and
 * returns the results JSON with the run's manifest. The one orchestration of a run: `runBench` of
 * `@kb/runtime/node` (`kb run`, sweeps) is this with files, and the playground's worker is this
 * with an editor's text. Reads no file and keeps everything in memory unless told otherwise.
 *
 * ```ts
 * const run = await runBenchCore({ bench, topology: yamlText, benchSource: benchText, verify: true });
 * const json = `${JSON.stringify(run.results, null, 2)}\n`; // what kb run --json prints
 * ```
 *
 * Throws `RUNTIME_INVALID` for options that give no machine or no manifest, the bench's bad
 * params, the topology's errors, `RUN_LIMIT`, and what the bench throws (see `isUserError`).
 */
export async function runBenchCore(options: RunBenchCoreOptions): Promise<RunBenchResult> {
  const { bench, onProgress } = options;
  const params = parseBenchParams(bench, options.params ?? {}) as Record<string, unknown>;
  const checkPhases = options.checkPhases === true;
  const verify = options.verify === true;
  const hostData = runHostData(options.hostData, verify || checkPhases);
  const topology = coreTopology(options);
  const manifest = options.manifest ?? (await coreManifest(options, topology, params));
  // checkPhases keeps the records in memory (its comparer indexes them by id); verify alone keeps
  // them where the caller says (Node spills a long log to a temporary file).
  const inMemory = checkPhases ? memoryPhase2Log() : null;
  const phase2Log: Phase2OpLog | null =
    inMemory ?? (verify ? (options.phase2Log?.() ?? memoryPhase2Log()) : null);
  const kept = inMemory?.kept ?? null;
  const extraSink = options.opLogSink ?? null;
  const sink =
    phase2Log !== null && extraSink !== null
      ? teeSink(phase2Log.sink, extraSink)
      : (phase2Log?.sink ?? extraSink);
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
    const simulatorOptions: CoreSimulatorOptions = {
      opLogger: logger,
      tracer: tap ?? recorder,
      checkPhases,
      limits: options.limits ?? {},
      hostData,
    };
    const sim =
      topology === null
        ? await (options.simulator as NonNullable<RunBenchCoreOptions["simulator"]>)(simulatorOptions)
        : await Simulator.fromTopology(expandTopology(topology), {
            ...simulatorOptions,
            plugins: options.plugins ?? [],
          });
    tap?.start(sim);
    const runStart = performance.now();
    const outcome = await runUserCode(bench, sim, params, options.benchFile, options.isUserError);
    checkOutcomeTolerances(outcome, bench.name, options.benchFile);
    const runEnd = performance.now();
    let results: RunResults = sim.results(bench.name, params, outcome?.tokens ?? null);
    if (outcome?.report !== undefined) {
      const { title, columns, rows, series } = outcome.report;
      const report = { title, columns: [...columns], rows: rows.map((row) => [...row]) };
      results = {
        ...results,
        report:
          series === undefined
            ? report
            : { ...report, series: series.map((s) => ({ ...s, x: [...s.x], y: [...s.y] })) },
      };
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
      const comparer = kept !== null ? new PhaseComparer(sim.loadObservations, kept) : null;
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
        const located = withReferenceErrors(outcome, bench.name, options.benchFile);
        const watched = withReferenceProgress(located, (reference) => {
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
 * The run options that change the results JSON: part of the manifest. Limits are not: a run
 * that reaches one stops with an error and has no results, one that does not is unchanged.
 */
export function resultOptions(options: {
  readonly verify?: boolean;
  readonly checkPhases?: boolean;
}): Record<string, unknown> {
  return {
    ...(options.verify === true ? { verify: true } : {}),
    ...(options.checkPhases === true ? { checkPhases: true } : {}),
  };
}

/** The resolved topology of `options.topology`, or null with a `simulator` factory. */
function coreTopology(options: RunBenchCoreOptions): Topology | null {
  if ((options.topology === undefined) === (options.simulator === undefined)) {
    throw new KbError(
      "RUNTIME_INVALID",
      "runBenchCore needs one machine: a topology (YAML text or object) or a simulator factory, not both or neither.",
    );
  }
  if (options.topology === undefined) return null;
  const topology =
    typeof options.topology === "string"
      ? parseTopology(options.topology, options.topologyName)
      : resolveTopology(options.topology, options.topologyName);
  const loaded = new Set((options.plugins ?? []).map((plugin) => plugin.meta.name));
  const missing = topology.plugins.filter((name) => !loaded.has(name));
  if (missing.length > 0) {
    throw new KbError(
      "RUNTIME_INVALID",
      `topology "${topology.name}" loads the plug-ins ${missing.map((name) => JSON.stringify(name)).join(", ")} by name, which only Node can import: pass the loaded KbPlugin objects (plugins), or run it with kb run.`,
      options.topologyName !== undefined ? { context: { file: options.topologyName } } : {},
    );
  }
  return topology;
}

/** The manifest of a run with a topology: its digests made from the loaded inputs. */
function coreManifest(
  options: RunBenchCoreOptions,
  topology: Topology | null,
  params: Record<string, unknown>,
): Promise<RunManifest> {
  if (topology === null || options.benchSource === undefined) {
    throw new KbError(
      "RUNTIME_INVALID",
      "runBenchCore makes the manifest from the topology and the bench's source: pass topology and benchSource, or a ready manifest.",
    );
  }
  return manifestOf({
    bench: options.bench,
    benchSource: options.benchSource,
    topology,
    plugins: options.plugins ?? [],
    params,
    options: resultOptions(options),
    packages: options.packages ?? {},
    ...(options.runtime !== undefined ? { runtime: options.runtime } : {}),
  });
}

/** The host-data mode of a run: `options.hostData`, else full when phase 2 runs, else timing-only. */
function runHostData(mode: HostDataMode | undefined, phase2: boolean): HostDataMode {
  if (mode === "timing-only" && phase2) {
    throw new KbError(
      "RUNTIME_INVALID",
      "hostData timing-only leaves the bytes of deferred tensors unmade, and phase 2 (verify, checkPhases) needs them: drop timing-only, or run without verify and checkPhases.",
    );
  }
  return checkHostDataMode(mode ?? (phase2 ? "full" : "timing-only"));
}
