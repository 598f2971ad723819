import { existsSync } from "node:fs";
import * as components from "@kb/components";
import { formatVerifyTable, type VerifyReport } from "@kb/data-executor";
import { KbError } from "@kb/errors";
import * as oplog from "@kb/oplog";
import { JsonlSink, SpillSink } from "@kb/oplog/node";
import * as runtime from "@kb/runtime";
import { parseBenchParams, type RunResults } from "@kb/runtime";
import { loadSimulator } from "@kb/runtime/node";
import { type Command, InvalidArgumentError } from "commander";
import { loadBench, locateBench, locateTopology, runUserCode } from "./bench-files.js";
import {
  formatReport,
  formatRunSummary,
  formatWallMs,
  groupDigits,
  type RunExtras,
  type RunOutput,
} from "./format-run.js";
import { chromeTraceChunks, isGzipPath, PendingFile } from "./pending-file.js";
import { ProgressLine, ProgressTracer, referenceProgressText } from "./progress-line.js";
import type { CliIo, RunState } from "./run-cli.js";
import { RunOutputs } from "./run-outputs.js";

/** Options of `kb run` as commander parses them. */
interface RunOptions {
  topology?: string;
  param?: Record<string, string>;
  json?: boolean;
  trace?: string;
  oplog?: string;
  plugin?: string[];
  verify?: boolean;
  checkPhases?: boolean;
  traceFilter?: components.TraceFilter;
  traceCounterNs?: number;
  maxEvents?: number;
  maxSimTime?: number;
  timeout?: number;
}

/** Adds `kb run BENCH` to the program. */
export function addRunCommand(program: Command, io: CliIo, state: RunState): Command {
  return program
    .command("run")
    .summary("run a bench on a topology and print what it took")
    .description(
      "Run a bench (a host program that launches kernels) on a simulated topology and print the " +
        "simulated time, each launch over its kernel window (rates, bytes per level, rooflines) with " +
        "the host copies apart, the whole run's throughput and roofline time, the utilisation by " +
        "component kind and the busiest components. BENCH is a name, run from benches/NAME.ts (looked " +
        "up in the current directory and its parents, then among the benches kb ships), or the path of a " +
        ".ts, .js or .mjs file whose default export is defineBench({...}) of @kb/runtime; .ts files " +
        "run without a build step. A progress line is shown on a terminal (stderr), never on a pipe.",
    )
    .argument("<bench>", "bench name (benches/NAME.ts) or path of a bench file")
    .option(
      "--topology <file|name>",
      "topology YAML file, or a name looked up as topologies/NAME.yaml like bench names (default: default)",
    )
    .option(
      "--param <key=value>",
      "set a bench param (repeatable); the value is JSON where it parses, else a string",
      collectParam,
    )
    .option(
      "--json",
      "print the results as JSON instead (RunResultsSchema of @kb/runtime); the same inputs print the same bytes",
    )
    .option(
      "--trace <file>",
      "write a Chrome trace-event JSON of the run (opens in Perfetto); a name ending in .gz (run.trace.json.gz) writes it gzip-compressed, which Perfetto opens as is",
    )
    .option(
      "--trace-filter <glob[@from-to]>",
      "keep only components matching the glob (* within a dot-separated part, ** across parts) and, after @, a window of simulated ns, e.g. 'sip0.cube1.**@0-50000' or '**.pe_gemm'",
      parseTraceFilter,
    )
    .option(
      "--trace-counter-ns <ns>",
      `sample the trace's counters (queue depth, HBM GB/s): a point only when the value changed, at most one per NS of simulated time per counter (default ${components.DEFAULT_COUNTER_INTERVAL_NS}; 0 keeps every change)`,
      nonNegativeNumber("--trace-counter-ns"),
    )
    .option("--oplog <file>", "write the op log as JSONL (one op record per line)")
    .option(
      "--max-events <n>",
      `stop the run after N DES events (default ${groupDigits(runtime.DEFAULT_MAX_EVENTS)}; catches a kernel that never ends)`,
      positiveNumber("--max-events"),
    )
    .option(
      "--max-sim-time <ns>",
      "stop the run when the simulated time reaches NS nanoseconds",
      positiveNumber("--max-sim-time"),
    )
    .option("--timeout <seconds>", "stop the run after SECONDS of wall time", positiveNumber("--timeout"))
    .option(
      "--plugin <package...>",
      "also load these plug-ins: npm package names, or paths (./my-hbm, ./my-hbm.ts, a package directory) from the current directory",
    )
    .option(
      "--verify",
      "run phase 2 after phase 1 (replay the op log with real arithmetic) and check the bench's outputs against its references; exit code 1 on FAIL",
    )
    .option(
      "--check-phases",
      "run phase 2 and compare every value a kernel observed in phase 1 with what phase 2 computes for the same op; exit 1 at the first difference",
    )
    .addHelpText(
      "after",
      "\nExamples:\n" +
        "  kb run gemm --param M=512 --param dtype=bf16\n" +
        "  kb run ./my-bench.ts --topology topologies/ref-cube.yaml --json > results.json\n" +
        "  kb run gemm --trace gemm.trace.json   # open it in https://ui.perfetto.dev\n" +
        "  kb run gemm --trace gemm.trace.json.gz --trace-counter-ns 0   # compressed, every counter change\n" +
        "  kb run softmax --param dtype=bf16 --verify\n" +
        "  kb run ./my-bench.ts --check-phases --verify   # one replay for both",
    )
    .action(async (benchArg: string, options: RunOptions) => {
      const passed = await runBench(benchArg, options, io);
      if (!passed) state.exitCode = 1;
    });
}

/** A parser of a number > 0 (`1e9`, `2_000_000`) for the option `name`. */
function positiveNumber(name: string): (value: string) => number {
  return (value) => {
    const number = Number(value.replaceAll("_", ""));
    if (!(number > 0) || value.trim() === "") {
      throw new InvalidArgumentError(`${name} needs a number > 0, such as 1e9; got "${value}".`);
    }
    return number;
  };
}

/** A parser of a number >= 0 for the option `name`. */
function nonNegativeNumber(name: string): (value: string) => number {
  return (value) => {
    const number = Number(value.replaceAll("_", ""));
    if (!(number >= 0 && Number.isFinite(number)) || value.trim() === "") {
      throw new InvalidArgumentError(`${name} needs a number >= 0, such as 1000 or 0; got "${value}".`);
    }
    return number;
  };
}

/** `GLOB[@FROM-TO]` of --trace-filter (FROM or TO may be empty: open-ended). */
function parseTraceFilter(value: string): components.TraceFilter {
  const at = value.lastIndexOf("@");
  const glob = at < 0 ? value : value.slice(0, at);
  const window = at < 0 ? null : /^(\d+(?:\.\d+)?)?-(\d+(?:\.\d+)?)?$/.exec(value.slice(at + 1));
  if (at >= 0 && window === null) {
    throw new InvalidArgumentError(
      "expected GLOB@FROM-TO with times in simulated ns, such as sip0.**@0-50000.",
    );
  }
  return {
    ...(glob.length > 0 ? { components: glob } : {}),
    ...(window?.[1] !== undefined ? { fromNs: Number(window[1]) } : {}),
    ...(window?.[2] !== undefined ? { toNs: Number(window[2]) } : {}),
  };
}

function collectParam(value: string, previous: Record<string, string> | undefined): Record<string, string> {
  const equals = value.indexOf("=");
  if (equals <= 0) throw new InvalidArgumentError("expected key=value, such as M=512 or dtype=bf16.");
  return { ...previous, [value.slice(0, equals)]: value.slice(equals + 1) };
}

/**
 * Runs a bench; returns false when a check failed (--verify FAIL, or --check-phases found a
 * difference), true otherwise.
 */
async function runBench(benchArg: string, options: RunOptions, io: CliIo): Promise<boolean> {
  const cwd = process.cwd();
  const benchFile = locateBench(benchArg, cwd);
  const bench = await loadBench(benchFile);
  const params = parseBenchParams(bench, options.param ?? {}) as Record<string, unknown>;
  const topologyFile = locateTopology(options.topology ?? "default", cwd);

  if (options.traceCounterNs !== undefined && options.trace === undefined) {
    throw new KbError(
      "CLI_USAGE",
      "--trace-counter-ns samples the counters of the trace; add --trace FILE, or leave it out.",
    );
  }

  const progress = io.stderr.isTTY === true && options.json !== true ? new ProgressLine(io.stderr) : null;
  // Outputs are checked before the run (a directory, an input, a name given twice fail now, not
  // after it), written to temporary files and renamed together when the run succeeded: a failed
  // or interrupted run leaves none of them.
  const files = RunOutputs.plan(
    [
      ...(options.trace !== undefined ? [{ option: "--trace", path: options.trace }] : []),
      ...(options.oplog !== undefined ? [{ option: "--oplog", path: options.oplog }] : []),
    ],
    [benchFile, topologyFile, ...(options.plugin ?? []).filter((plugin) => existsSync(plugin))],
    cwd,
  );
  const stopHandlingSignals = files.outputs.length > 0 ? files.onSignals(io.stderr) : null;
  const traceOutput = files.get("--trace");
  const oplogOutput = files.get("--oplog");
  const traceFile =
    traceOutput === undefined
      ? null
      : new PendingFile(traceOutput.temp, "trace", { gzip: isGzipPath(traceOutput.target) });
  let logger: oplog.OpLogger | null = null;
  let results: RunResults;
  let phase2Log: Phase2Log | null = null;
  let report: VerifyReport | null = null;
  let phaseCheck: runtime.PhaseCheck | null = null;
  let phase2WallMs = 0;
  let checkWallMs = 0;
  let referenceWallMs = 0;
  let outcome: runtime.BenchOutcome | undefined;
  let extras: Omit<RunExtras, "outputs">;
  try {
    const checkPhases = options.checkPhases === true;
    phase2Log = options.verify === true || checkPhases ? phase2LogFor(checkPhases) : null;
    const fileSink = oplogOutput === undefined ? null : new JsonlSink(oplogOutput.temp);
    const sink =
      phase2Log !== null && fileSink !== null
        ? teeSink(phase2Log.sink, fileSink)
        : (phase2Log?.sink ?? fileSink);
    logger = sink === null ? null : new oplog.OpLogger(sink);
    const recorder =
      traceFile === null
        ? null
        : new components.TraceRecorder(
            options.traceCounterNs === undefined ? {} : { counterIntervalNs: options.traceCounterNs },
          );
    progress?.show(`${bench.name}: building the machine of ${topologyFile}`);
    // Progress rides on the tracer: it adds no simulation events, so the results are the same on a
    // terminal and on a pipe.
    const progressTracer = progress === null ? null : new ProgressTracer(recorder, progress, bench.name);
    const buildStart = performance.now();
    const sim = await loadSimulator(topologyFile, {
      plugins: options.plugin ?? [],
      opLogger: logger,
      tracer: progressTracer ?? recorder,
      checkPhases,
      limits: {
        ...(options.maxEvents !== undefined ? { maxEvents: options.maxEvents } : {}),
        ...(options.maxSimTime !== undefined ? { maxSimTimeNs: options.maxSimTime } : {}),
        ...(options.timeout !== undefined ? { timeoutMs: options.timeout * 1000 } : {}),
      },
    });
    progressTracer?.start(sim);
    const runStart = performance.now();
    outcome = await runUserCode(benchFile, bench, sim, params);
    const runEnd = performance.now();
    extras = { buildWallMs: runStart - buildStart, runWallMs: runEnd - runStart };
    results = sim.results(bench.name, params);
    if (outcome?.report !== undefined) {
      const { title, columns, rows } = outcome.report;
      results = { ...results, report: { title, columns: [...columns], rows: rows.map((row) => [...row]) } };
    }
    await logger?.close();
    if (phase2Log !== null) {
      const total = phase2Log.count();
      progress?.show(`${bench.name}: phase 2, replaying ${groupDigits(total)} ops`);
      const phase2Start = performance.now();
      // One thread: measured with `pnpm bench:executor --part phase2`, a GemmPool of 2 made the
      // replay of gemm 2048^3 slower (2.4 s against 1.9 s); GEMMs are a small share of it.
      let shownMs = 0;
      const onProgress =
        progress === null
          ? null
          : (done: number) => {
              const now = performance.now();
              if (now - shownMs < 100) return;
              shownMs = now;
              const elapsed = now - phase2Start;
              const eta = (elapsed / done) * (total - done);
              progress.show(
                `${bench.name}: phase 2, ${groupDigits(done)} of ${groupDigits(total)} ops replayed, ETA ${formatWallMs(eta)}`,
              );
            };
      // One replay serves --verify and --check-phases: the comparer reads each observed load's
      // bytes as its dma_read runs, the verification reads the outputs from the store at the end.
      const comparer =
        phase2Log.kept !== null ? new runtime.PhaseComparer(sim.loadObservations, phase2Log.kept) : null;
      const phase2 = runtime.replay(sim.hostWrites, phase2Log.records(), {
        onProgress,
        onExecuted: comparer?.onExecuted ?? null,
      });
      phase2WallMs = performance.now() - phase2Start;
      if (comparer !== null) {
        phaseCheck = comparer.result();
        results = { ...results, phaseCheck };
      }
      if (options.verify === true) {
        progress?.show(`${bench.name}: computing the references and comparing`);
        const checkStart = performance.now();
        // Each reference reports its progress (shown at most ten times a second) and, when it
        // returns, its wall time.
        const watched = runtime.withReferenceProgress(outcome, (reference) => {
          if (reference.done) referenceWallMs += reference.elapsedMs;
          progress?.show(referenceProgressText(bench.name, reference));
        });
        report = await runtime.verifyOutcome(watched, phase2.store, {
          firstNonFinite: phase2.executor.firstNonFinite,
        });
        checkWallMs = performance.now() - checkStart;
        results = { ...results, verification: runtime.verificationJson(report) };
      }
    }
    if (traceFile !== null && recorder !== null)
      await traceFile.write(chromeTraceChunks(recorder, options.traceFilter));
    files.commit();
  } catch (error) {
    logger?.abort();
    traceFile?.discard();
    files.discard();
    throw error;
  } finally {
    stopHandlingSignals?.();
    phase2Log?.dispose();
    progress?.clear();
  }

  const passed = report?.pass !== false && phaseCheck?.firstDifference == null;
  if (options.json === true) {
    io.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
    return passed;
  }
  const outputs = Object.entries(outcome?.check ?? {}).map(([name, check]): RunOutput => {
    const actual = (check as Partial<runtime.BenchCheck> | undefined)?.actual;
    return actual instanceof runtime.DeviceTensor
      ? { name, dtype: actual.dtype, shape: actual.shape }
      : { name };
  });
  io.stdout.write(formatRunSummary(results, { ...extras, outputs, verified: report !== null }));
  if (results.report !== undefined) io.stdout.write(`\n${formatReport(results.report)}`);
  if (report !== null) {
    io.stdout.write(
      `\nverification (phase 2: ${groupDigits(phase2Log?.count() ?? 0)} ops replayed in ${formatWallMs(phase2WallMs)}; references computed in ${formatWallMs(referenceWallMs)}, compared in ${formatWallMs(checkWallMs - referenceWallMs)})\n`,
    );
    io.stdout.write(formatVerifyTable(report));
  }
  if (phaseCheck !== null) io.stdout.write(`\n${runtime.formatPhaseCheck(phaseCheck)}`);
  return passed;
}

/** The op log phase 2 replays in this process, and how it is kept. */
interface Phase2Log {
  readonly sink: oplog.OpLogSink;
  /** Every record in memory (--check-phases matches loads by record id), else null. */
  readonly kept: readonly oplog.OpRecord[] | null;
  count(): number;
  /** The records in id order, once the logger is closed. */
  records(): Iterable<oplog.OpRecord>;
  dispose(): void;
}

/**
 * `--check-phases` keeps the records in memory (its comparer indexes them by id); `--verify` alone
 * streams them to a temporary file past 131 072 records (`SpillSink`), so a long run's log costs
 * disk, not memory, and the replay holds one chunk at a time.
 */
function phase2LogFor(checkPhases: boolean): Phase2Log {
  if (checkPhases) {
    const sink = new oplog.MemorySink();
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

/** An op-log sink writing to two sinks (phase 2 in memory and the --oplog file). */
function teeSink(first: oplog.OpLogSink, second: oplog.OpLogSink): oplog.OpLogSink {
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
