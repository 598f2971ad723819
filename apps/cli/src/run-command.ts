import { existsSync } from "node:fs";
import { resolve } from "node:path";
import * as components from "@kb/components";
import { formatVerifyTable } from "@kb/data-executor";
import { isKbError, KbError } from "@kb/errors";
import { JsonlSink } from "@kb/oplog/node";
import * as runtime from "@kb/runtime";
import {
  benchManifest,
  packageVersions,
  ResultsCache,
  type RunBenchOptions,
  type RunBenchResult,
  resultsText,
  runBench,
} from "@kb/runtime/node";
import { isPrototypeKey, prototypeKeyMessage } from "@kb/topology";
import { topologyFileWarnings } from "@kb/topology/node";
import { type Command, InvalidArgumentError } from "commander";
import { loadBench, locateBench, locateTopology } from "./bench-files.js";
import { typeCheckBeforeRun } from "./check-command.js";
import { DEFAULT_BY_LINE, formatByLine } from "./format-by-line.js";
import { formatReport, formatRunSummary, formatWallMs, groupDigits, type RunOutput } from "./format-run.js";
import { formatWarning } from "./located-issues.js";
import { chromeTraceChunks, isGzipPath, PendingFile } from "./pending-file.js";
import { PlanLines } from "./plan-progress.js";
import { ProgressLine, RunProgressView } from "./progress-line.js";
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
  fullData?: boolean;
  traceFilter?: components.TraceFilter;
  traceCounterNs?: number;
  maxEvents?: number;
  maxSimTime?: number;
  timeout?: number;
  maxStallCalls?: number;
  manifestOnly?: boolean;
  cache?: string;
  typecheck?: boolean;
  byLine?: number | true;
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
      `stop the run when one wait of the host program (a launch, a copy, a synchronisation) passes N DES events (default ${groupDigits(runtime.DEFAULT_MAX_EVENTS)}; catches a kernel that never ends, however many launches the run has)`,
      positiveNumber("--max-events"),
    )
    .option(
      "--max-sim-time <ns>",
      "stop the run when the simulated time reaches NS nanoseconds",
      positiveNumber("--max-sim-time"),
    )
    .option("--timeout <seconds>", "stop the run after SECONDS of wall time", positiveNumber("--timeout"))
    .option(
      "--max-stall-calls <n>",
      `stop the run after N tl calls in a row (all kernels together) with no progress of the machine: no byte moved, nothing computed, nothing through a queue (default ${groupDigits(runtime.DEFAULT_MAX_STALL_CALLS)}, a few seconds; catches a kernel looping for ever on tl.cycles or tl.wait; Infinity turns it off)`,
      positiveNumber("--max-stall-calls"),
    )
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
    .option(
      "--full-data",
      "make the bytes of the bench's deferred tensors (weights a kernel never branches on) without --verify too; by default a run without --verify or --check-phases leaves them unmade (same simulated times, a fraction of the memory: docs/workloads.md)",
    )
    .option(
      "--by-line [n]",
      `after the summary, list each launch's N kernel lines (default ${DEFAULT_BY_LINE}) with the most of its programs' time spent waiting at their tl calls, with their calls, engine time and bytes (docs/reports.md, "By line"; --json has every line in launches[].sites)`,
      positiveInteger("--by-line"),
    )
    .option(
      "--manifest-only",
      "print the run's manifest (package and plug-in versions, topology and bench digests, params, seed, options, its digest) and exit without running",
    )
    .option(
      "--cache <dir>",
      "keep results by manifest digest in DIR (DIR/<digest>.json) and print a cached run instead of simulating it again (not with --trace or --oplog, which need the run)",
    )
    .option(
      "--typecheck",
      "type-check the bench and the files it imports first, as kb check does; on a type error print it (FILE:LINE:COL: error TSnnnn) and run nothing (exit 1)",
    )
    .addHelpText(
      "after",
      "\nExamples:\n" +
        "  kb run gemm --param M=512 --param dtype=bf16\n" +
        "  kb run ./my-bench.ts --topology topologies/ref-cube.yaml --json > results.json\n" +
        "  kb run gemm --trace gemm.trace.json   # open it in https://ui.perfetto.dev\n" +
        "  kb run gemm --trace gemm.trace.json.gz --trace-counter-ns 0   # compressed, every counter change\n" +
        "  kb run softmax --param dtype=bf16 --verify\n" +
        "  kb run attention --by-line   # which kernel lines the time goes to\n" +
        "  kb run ./my-bench.ts --check-phases --verify   # one replay for both",
    )
    .action(async (benchArg: string, options: RunOptions) => {
      const passed = await runCommand(benchArg, options, io);
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

/** A parser of an integer >= 1 for the option `name`. */
function positiveInteger(name: string): (value: string) => number {
  return (value) => {
    const number = Number(value);
    if (!(Number.isInteger(number) && number >= 1) || value.trim() === "") {
      throw new InvalidArgumentError(`${name} needs a whole number >= 1, such as 5; got "${value}".`);
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
  const key = value.slice(0, equals);
  if (isPrototypeKey(key)) throw new InvalidArgumentError(`${key}=...: ${prototypeKeyMessage(key)}`);
  const params: Record<string, string> = Object.assign(Object.create(null), previous);
  params[key] = value.slice(equals + 1);
  return params;
}

/**
 * Runs a bench (`runBench` of `@kb/runtime/node`) and prints it; returns false when a check failed
 * (--verify FAIL, or --check-phases found a difference), true otherwise.
 */
async function runCommand(benchArg: string, options: RunOptions, io: CliIo): Promise<boolean> {
  const cwd = process.cwd();
  const benchFile = locateBench(benchArg, cwd);
  if (options.typecheck === true) await typeCheckBeforeRun(benchFile, io, cwd);
  const bench = await loadBench(benchFile);
  const topologyFile = locateTopology(options.topology ?? "default", cwd);

  if (options.traceCounterNs !== undefined && options.trace === undefined) {
    throw new KbError(
      "CLI_USAGE",
      "--trace-counter-ns samples the counters of the trace; add --trace FILE, or leave it out.",
    );
  }
  if (options.manifestOnly === true && (options.trace !== undefined || options.oplog !== undefined)) {
    throw new KbError(
      "CLI_USAGE",
      "--manifest-only runs nothing, so it writes no --trace or --oplog file; leave those out.",
    );
  }
  // The topology's warnings (as kb topology validate prints them), before the run.
  for (const warning of topologyFileWarnings(topologyFile)) io.stderr.write(`${formatWarning(warning)}\n`);
  const runOptions: RunBenchOptions = {
    bench,
    benchFile,
    topology: topologyFile,
    params: options.param ?? {},
    plugins: options.plugin ?? [],
    verify: options.verify === true,
    checkPhases: options.checkPhases === true,
    ...(options.fullData === true ? { hostData: "full" as const } : {}),
    limits: {
      ...(options.maxEvents !== undefined ? { maxEvents: options.maxEvents } : {}),
      ...(options.maxSimTime !== undefined ? { maxSimTimeNs: options.maxSimTime } : {}),
      ...(options.timeout !== undefined ? { timeoutMs: options.timeout * 1000 } : {}),
      ...(options.maxStallCalls !== undefined ? { maxStallCalls: options.maxStallCalls } : {}),
    },
    packages: kbPackageVersions(),
  };
  const manifest = await benchManifest(runOptions);
  if (options.manifestOnly === true) {
    io.stdout.write(`${JSON.stringify(manifest, null, 2)}\n`);
    return true;
  }
  // A cached run has no trace or op log to give: with those, the run is simulated again.
  const cache =
    options.cache !== undefined && options.trace === undefined && options.oplog === undefined
      ? new ResultsCache(resolve(cwd, options.cache))
      : null;
  const cached = cache?.get(manifest.digest) ?? null;
  if (cached?.status === "hit") {
    return printCached(cached, (cache as ResultsCache).path(manifest.digest), options, io);
  }
  if (cached?.status === "damaged") {
    io.stderr.write(
      `kb run: warning: ignoring the cache entry ${(cache as ResultsCache).path(manifest.digest)}: ${cached.reason}; running again and caching the new results.\n`,
    );
  }

  const progress = io.stderr.isTTY === true && options.json !== true ? new ProgressLine(io.stderr) : null;
  const view =
    progress !== null
      ? new RunProgressView(progress, bench.name, topologyFile)
      : options.json !== true
        ? new PlanLines(io.stderr, bench.name)
        : null;
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
  let run: RunBenchResult;
  let outputFailures: KbError[] = [];
  try {
    run = await runBench({
      ...runOptions,
      manifest,
      ...(traceFile !== null
        ? { trace: options.traceCounterNs === undefined ? {} : { counterIntervalNs: options.traceCounterNs } }
        : {}),
      // The op log is an optional output: a full disk under it is reported after the results.
      opLogSink:
        oplogOutput === undefined ? null : files.optionalSink("--oplog", new JsonlSink(oplogOutput.temp)),
      onProgress: view === null ? undefined : (event) => view.show(event),
    });
    if (traceFile !== null && run.recorder !== null) {
      await traceFile
        .write(chromeTraceChunks(run.recorder, options.traceFilter))
        .catch((error: unknown) => files.fail("--trace", error));
    }
    outputFailures = files.commit();
  } catch (error) {
    traceFile?.discard();
    files.discard();
    throw error;
  } finally {
    stopHandlingSignals?.();
    progress?.clear();
  }
  try {
    cache?.put(manifest.digest, run.results);
  } catch (error) {
    // The cache is an optional output: the results are printed all the same.
    if (!isKbError(error)) throw error;
    io.stderr.write(`kb run: warning: ${error.detail}\n`);
  }
  printRun(run, options, io);
  // An output the user asked for (--trace, --oplog) that could not be written: exit 1, after the results.
  for (const failure of outputFailures) io.stderr.write(`${failure.message}\n`);
  return run.passed && outputFailures.length === 0;
}

/** Prints a run's results: their JSON with --json, else the summary, report and checks. */
function printRun(run: RunBenchResult, options: RunOptions, io: CliIo): void {
  const { results, verification, phaseCheck, wall } = run;
  if (options.json === true) {
    io.stdout.write(resultsText(results));
    return;
  }
  const outputs = Object.entries(run.outcome?.check ?? {}).map(([name, check]): RunOutput => {
    const actual = (check as Partial<runtime.BenchCheck> | undefined)?.actual;
    return actual instanceof runtime.DeviceTensor
      ? { name, dtype: actual.dtype, shape: actual.shape }
      : { name };
  });
  io.stdout.write(
    formatRunSummary(results, {
      buildWallMs: wall.buildMs,
      runWallMs: wall.runMs,
      outputs,
      verified: verification !== null,
    }),
  );
  if (results.report !== undefined) io.stdout.write(`\n${formatReport(results.report)}`);
  printByLine(results, options, io);
  if (verification !== null) {
    io.stdout.write(
      `\nverification (phase 2: ${groupDigits(run.phase2Ops)} ops replayed in ${formatWallMs(wall.phase2Ms)}; references computed in ${formatWallMs(wall.referenceMs)}, compared in ${formatWallMs(wall.checkMs - wall.referenceMs)})\n`,
    );
    io.stdout.write(formatVerifyTable(verification));
  }
  if (phaseCheck !== null) io.stdout.write(`\n${runtime.formatPhaseCheck(phaseCheck)}`);
}

/** Prints a cached run: its JSON as it was written, or its summary with a note. */
function printCached(
  { text, results }: { readonly text: string; readonly results: runtime.RunResults },
  file: string,
  options: RunOptions,
  io: CliIo,
): boolean {
  const passed = results.verification?.pass !== false && results.phaseCheck?.firstDifference == null;
  if (options.json === true) {
    io.stdout.write(text);
    return passed;
  }
  io.stdout.write(`cached: ${file} (the same manifest digest; not simulated again)\n`);
  io.stdout.write(formatRunSummary(results, { buildWallMs: 0, runWallMs: 0, outputs: [] }));
  if (results.report !== undefined) io.stdout.write(`\n${formatReport(results.report)}`);
  printByLine(results, options, io);
  if (results.verification !== undefined) {
    io.stdout.write(`\nverification: ${results.verification.pass ? "PASS" : "FAIL"} (cached)\n`);
  }
  if (results.phaseCheck !== undefined) io.stdout.write(`\n${runtime.formatPhaseCheck(results.phaseCheck)}`);
  return passed;
}

/** `--by-line [N]`: each launch's top lines, after the summary. */
function printByLine(results: runtime.RunResults, options: RunOptions, io: CliIo): void {
  if (options.byLine === undefined) return;
  const top = options.byLine === true ? DEFAULT_BY_LINE : options.byLine;
  io.stdout.write(`\n${formatByLine(results, top).join("\n")}\n`);
}

/** The @kb packages this kb runs with, by name, and their versions (the manifest's `packages`). */
function kbPackageVersions(): Record<string, string> {
  return packageVersions(runtime.MANIFEST_PACKAGES, import.meta.url);
}
