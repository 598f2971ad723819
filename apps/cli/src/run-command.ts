import {
  closeSync,
  existsSync,
  openSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
} from "node:fs";
import { dirname, join, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import * as ccl from "@kb/ccl";
import * as components from "@kb/components";
import * as dataExecutor from "@kb/data-executor";
import { formatVerifyTable, type VerifyReport } from "@kb/data-executor";
import * as errors from "@kb/errors";
import { KbError } from "@kb/errors";
import * as oplog from "@kb/oplog";
import { JsonlSink } from "@kb/oplog/node";
import * as runtime from "@kb/runtime";
import { type Bench, isBench, parseBenchParams, type RunResults, Simulator } from "@kb/runtime";
import * as tensor from "@kb/tensor";
import * as tl from "@kb/tl";
import * as topology from "@kb/topology";
import { type Command, InvalidArgumentError } from "commander";
import * as zod from "zod";
import {
  formatNs,
  formatReport,
  formatRunSummary,
  formatSi,
  groupDigits,
  type RunExtras,
  type RunOutput,
} from "./format-run.js";
import type { CliIo, CliOutput, RunState } from "./run-cli.js";

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
}

/** Adds `kb run BENCH` to the program. */
export function addRunCommand(program: Command, io: CliIo, state: RunState): Command {
  return program
    .command("run")
    .summary("run a bench on a topology and print what it took")
    .description(
      "Run a bench (a host program that launches kernels) on a simulated topology and print the " +
        "simulated time, the throughput against the peaks, the roofline time, the utilisation by " +
        "component kind and the busiest components. BENCH is a name, run from benches/NAME.ts (looked " +
        "up in the current directory and its parents, then in the kb repository), or the path of a " +
        ".ts, .js or .mjs file whose default export is defineBench({...}) of @kb/runtime; .ts files " +
        "run without a build step. A progress line is shown on a terminal (stderr), never on a pipe.",
    )
    .argument("<bench>", "bench name (benches/NAME.ts) or path of a bench file")
    .option(
      "--topology <file>",
      "topology YAML file (default: topologies/default.yaml, looked up like bench names)",
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
    .option("--trace <file>", "write a Chrome trace-event JSON of the run (opens in Perfetto)")
    .option(
      "--trace-filter <glob[@from-to]>",
      "keep only components matching the glob (* within a dot-separated part, ** across parts) and, after @, a window of simulated ns, e.g. 'sip0.cube1.**@0-50000' or '**.pe_gemm'",
      parseTraceFilter,
    )
    .option("--oplog <file>", "write the op log as JSONL (one op record per line)")
    .option("--plugin <package...>", "also load these plug-in packages (npm names)")
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
        "  kb run softmax --param dtype=bf16 --verify\n" +
        "  kb run ./my-bench.ts --check-phases --verify   # one replay for both",
    )
    .action(async (benchArg: string, options: RunOptions) => {
      const passed = await runBench(benchArg, options, io);
      if (!passed) state.exitCode = 1;
    });
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
  const topologyFile =
    options.topology ?? findUp(join("topologies", "default.yaml"), cwd) ?? "topologies/default.yaml";

  const progress = io.stderr.isTTY === true && options.json !== true ? new ProgressLine(io.stderr) : null;
  // Files are opened before the run (a bad directory fails now, not after it) and complete only
  // when it succeeded: nothing half-written is left behind.
  const traceFile = options.trace === undefined ? null : new PendingFile(options.trace, "trace");
  let logger: oplog.OpLogger | null = null;
  let results: RunResults;
  let memorySink: oplog.MemorySink | null = null;
  let report: VerifyReport | null = null;
  let phaseCheck: runtime.PhaseCheck | null = null;
  let phase2WallMs = 0;
  let checkWallMs = 0;
  let outcome: runtime.BenchOutcome | undefined;
  let extras: Omit<RunExtras, "outputs">;
  try {
    const checkPhases = options.checkPhases === true;
    memorySink = options.verify === true || checkPhases ? new oplog.MemorySink() : null;
    const fileSink = options.oplog === undefined ? null : new JsonlSink(options.oplog);
    const sink =
      memorySink !== null && fileSink !== null ? teeSink(memorySink, fileSink) : (memorySink ?? fileSink);
    logger = sink === null ? null : new oplog.OpLogger(sink);
    const recorder = traceFile === null ? null : new components.TraceRecorder();
    progress?.show(`${bench.name}: building the machine of ${topologyFile}`);
    // Progress rides on the tracer: it adds no simulation events, so the results are the same on a
    // terminal and on a pipe.
    const progressTracer = progress === null ? null : new ProgressTracer(recorder, progress, bench.name);
    const buildStart = performance.now();
    const sim = await Simulator.fromTopology(topologyFile, {
      plugins: options.plugin ?? [],
      opLogger: logger,
      tracer: progressTracer ?? recorder,
      checkPhases,
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
    if (memorySink !== null) {
      progress?.show(`${bench.name}: phase 2, replaying ${groupDigits(memorySink.records.length)} ops`);
      const phase2Start = performance.now();
      // One thread: measured with `pnpm bench:executor --part phase2`, a GemmPool of 2 made the
      // replay of gemm 2048^3 slower (2.4 s against 1.9 s); GEMMs are a small share of it.
      const total = memorySink.records.length;
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
      const comparer = checkPhases
        ? new runtime.PhaseComparer(sim.loadObservations, memorySink.records)
        : null;
      const phase2 = runtime.replay(sim.hostWrites, memorySink.records, {
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
        report = await runtime.verifyOutcome(outcome, phase2.store, {
          firstNonFinite: phase2.executor.firstNonFinite,
        });
        checkWallMs = performance.now() - checkStart;
        results = { ...results, verification: runtime.verificationJson(report) };
      }
    }
    if (traceFile !== null && recorder !== null)
      traceFile.commit(chromeTraceChunks(recorder, options.traceFilter));
  } catch (error) {
    logger?.abort();
    traceFile?.discard();
    throw error;
  } finally {
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
      `\nverification (phase 2: ${groupDigits(memorySink?.records.length ?? 0)} ops replayed in ${formatWallMs(phase2WallMs)}; references computed and compared in ${formatWallMs(checkWallMs)})\n`,
    );
    io.stdout.write(formatVerifyTable(report));
  }
  if (phaseCheck !== null) io.stdout.write(`\n${runtime.formatPhaseCheck(phaseCheck)}`);
  return passed;
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

function formatWallMs(ms: number): string {
  return ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(0)} ms`;
}

// -------------------------------------------------------------------------------------------------
// Finding and loading benches

const BENCH_EXTENSIONS = [".ts", ".js", ".mjs"];

/** The directory of this file: `src/` when run from sources, `dist/` when built. */
const CLI_DIR = dirname(fileURLToPath(import.meta.url));

/** `dir` and its parents, nearest first. */
function upwards(dir: string): string[] {
  const dirs: string[] = [];
  for (let current = resolve(dir); ; current = dirname(current)) {
    dirs.push(current);
    if (dirname(current) === current) return dirs;
  }
}

/**
 * Where to look for `benches/` and `topologies/`: the current directory and its parents, then
 * the CLI package's own directory and its parents (the repository's, when kb runs from a clone).
 */
function searchDirs(cwd: string): string[] {
  return [...new Set([...upwards(cwd), ...upwards(CLI_DIR)])];
}

/** The first `<dir>/<relative>` that is a file, over {@link searchDirs}. */
function findUp(relative: string, cwd: string): string | undefined {
  for (const dir of searchDirs(cwd)) {
    const candidate = join(dir, relative);
    if (isFile(candidate)) return candidate;
  }
  return undefined;
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** A path (has a `/` or a bench file extension) as is; a name as `benches/<name>.ts`. */
function locateBench(benchArg: string, cwd: string): string {
  const isPath = /[/\\]/.test(benchArg) || BENCH_EXTENSIONS.some((extension) => benchArg.endsWith(extension));
  if (isPath) {
    const file = resolve(cwd, benchArg);
    if (!isFile(file)) {
      throw new KbError(
        "RUNTIME_INVALID",
        `bench file ${benchArg} not found (looked for ${file}). Pass the path of a .ts, .js or .mjs file whose default export is defineBench({...}), or a bench name.`,
        { context: { file: benchArg } },
      );
    }
    return file;
  }
  const file = findUp(join("benches", `${benchArg}.ts`), cwd);
  if (file !== undefined) return file;

  const found: string[] = [];
  const seen = new Set<string>();
  for (const dir of searchDirs(cwd)) {
    const benches = join(dir, "benches");
    if (!existsSync(benches) || !statSync(benches).isDirectory()) continue;
    // Bench files have plain names: `*.test.ts`, `*.config.ts` and `*.d.ts` are not benches.
    const names = readdirSync(benches)
      .map((entry) => /^([^.]+)\.ts$/.exec(entry)?.[1])
      .filter(
        (name): name is string =>
          name !== undefined && !seen.has(name) && isFile(join(benches, `${name}.ts`)),
      )
      .sort();
    for (const name of names) seen.add(name);
    if (names.length > 0) found.push(`in ${benches}: ${names.join(", ")}`);
  }
  const listing =
    found.length === 0 ? "No benches/*.ts were found there." : `Benches found ${found.join("; ")}.`;
  throw new KbError(
    "RUNTIME_INVALID",
    `no bench named "${benchArg}": looked for benches/${benchArg}.ts in ${cwd} and its parents, then beside kb (${CLI_DIR}) and its parents. ${listing} To run your own bench, pass the path of its file: kb run ./my-bench.ts.`,
  );
}

/**
 * The modules a bench file gets from the CLI itself rather than from its own node_modules: one
 * copy of each, so its `KbError`s, tensors and kernels are the ones the simulator knows, and a
 * bench file outside any project (no node_modules) still runs.
 */
const SHARED_MODULES: Record<string, unknown> = {
  "@kb/ccl": ccl,
  "@kb/components": components,
  "@kb/data-executor": dataExecutor,
  "@kb/errors": errors,
  "@kb/oplog": oplog,
  "@kb/runtime": runtime,
  "@kb/tensor": tensor,
  "@kb/tl": tl,
  "@kb/topology": topology,
  zod,
};

/** Imports a bench file (TypeScript through jiti) and returns its default export, checked. */
async function loadBench(file: string): Promise<Bench> {
  // Imported here: jiti brings a TypeScript transform, which only `kb run` needs.
  const { createJiti } = await import("jiti");
  const jiti = createJiti(import.meta.url, { virtualModules: SHARED_MODULES, moduleCache: false });
  let module: Record<string, unknown>;
  try {
    module = (await jiti.import(file)) as Record<string, unknown>;
  } catch (error) {
    throw new KbError(
      "RUNTIME_INVALID",
      `cannot load the bench file: ${error instanceof Error ? error.message.trim() : String(error)}\nA bench file is a module whose default export is defineBench({...}) of @kb/runtime.`,
      { context: { file }, cause: error },
    );
  }
  // jiti's interop answers `.default` even without a default export: ask for the key itself.
  const exported = Object.keys(module).includes("default") ? module.default : undefined;
  if (isBench(exported)) return exported;
  const names = Object.keys(module).filter((name) => name !== "default");
  const found =
    exported === undefined
      ? "it has no default export"
      : `its default export is ${describeValue(exported)}, not a bench`;
  throw new KbError(
    "RUNTIME_INVALID",
    `${found}${names.length === 0 ? "" : ` (named exports: ${names.join(", ")})`}. A bench file must \`export default defineBench({ name, params, async run(sim, params) {...} })\` with defineBench from @kb/runtime.`,
    { context: { file } },
  );
}

/**
 * Runs the bench's own code. A plain error thrown there (not a `KbError`) is the bench's fault,
 * exit 1 with its stack, when it was thrown in the bench's directory; thrown inside kb, it stays
 * an internal error (exit 2, please report).
 */
async function runUserCode(
  file: string,
  bench: Bench,
  sim: Simulator,
  params: Record<string, unknown>,
): Promise<runtime.BenchOutcome | undefined> {
  try {
    return (await bench.run(sim, params)) ?? undefined;
  } catch (error) {
    if (errors.isKbError(error) || !thrownUnder(error, dirname(file))) throw error;
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

function describeValue(value: unknown): string {
  if (value === null) return "null";
  if (typeof value === "function") return `a function${value.name ? ` (${value.name})` : ""}`;
  if (typeof value === "object") {
    const keys = Object.keys(value);
    return keys.length === 0 ? "an empty object" : `an object with keys ${keys.join(", ")}`;
  }
  return `a ${typeof value} (${JSON.stringify(value)})`;
}

/** A thrown value as text: a KbError's message, an Error's stack (it points into the user's file). */
function errorText(error: unknown): string {
  if (errors.isKbError(error)) return error.message;
  if (error instanceof Error) return error.stack ?? `${error.name}: ${error.message}`;
  return String(error);
}

// -------------------------------------------------------------------------------------------------
// Output files and progress

/**
 * A file written completely or not at all: `<path>.tmp-<pid>` is created at once (so a bad
 * directory fails before the run), filled and renamed to `path` by {@link commit}, or removed by
 * {@link discard}.
 */
class PendingFile {
  readonly path: string;
  private readonly tempPath: string;
  private fd: number | null;

  constructor(path: string, what: string) {
    this.path = path;
    this.tempPath = `${path}.tmp-${process.pid}`;
    try {
      this.fd = openSync(this.tempPath, "w");
    } catch (error) {
      throw new KbError(
        "CLI_USAGE",
        `cannot create the ${what} file ${this.tempPath}: ${(error as Error).message}. Check that the directory exists and is writable.`,
        { context: { file: path }, cause: error },
      );
    }
  }

  /** Writes the chunks, closes the file and renames it to {@link path}. */
  commit(chunks: Iterable<string>): void {
    const fd = this.fd;
    if (fd === null) return;
    try {
      for (const chunk of chunks) {
        const bytes = Buffer.from(chunk, "utf8");
        let offset = 0;
        while (offset < bytes.length) offset += writeSync(fd, bytes, offset, bytes.length - offset);
      }
    } catch (error) {
      this.discard();
      throw error;
    }
    this.fd = null;
    closeSync(fd);
    renameSync(this.tempPath, this.path);
  }

  /** Closes and removes the temporary file; `path` is left untouched. */
  discard(): void {
    if (this.fd === null) return;
    const fd = this.fd;
    this.fd = null;
    try {
      closeSync(fd);
    } finally {
      rmSync(this.tempPath, { force: true });
    }
  }
}

/**
 * The Chrome trace of a recorder as JSON text in chunks of about 1 MiB, one event per line: a
 * trace of millions of events never becomes one string.
 */
function* chromeTraceChunks(
  recorder: components.TraceRecorder,
  filter: components.TraceFilter | undefined,
): Generator<string> {
  const { traceEvents, ...rest } = recorder.toChromeTrace("kernbench-ts", filter);
  let chunk = '{"traceEvents":[';
  for (let index = 0; index < traceEvents.length; index++) {
    chunk += `${index === 0 ? "" : ","}\n${JSON.stringify(traceEvents[index])}`;
    if (chunk.length >= 1 << 20) {
      yield chunk;
      chunk = "";
    }
  }
  // `{"displayTimeUnit":...}` without its opening brace closes the document.
  yield `${chunk}\n],${JSON.stringify(rest).slice(1)}\n`;
}

/**
 * A tracer that forwards to `inner` (the trace recorder, if any) and, every few thousand events,
 * shows the simulated time and the event rate on the progress line (at most ten times a second).
 */
class ProgressTracer implements components.Tracer {
  private readonly inner: components.Tracer | null;
  private readonly line: ProgressLine;
  private readonly name: string;
  private sim: Simulator | null = null;
  private calls = 0;
  private startMs = 0;
  private shownMs = 0;

  constructor(inner: components.Tracer | null, line: ProgressLine, name: string) {
    this.inner = inner;
    this.line = line;
    this.name = name;
  }

  /** Starts the clock of the event rate once the machine is built. */
  start(sim: Simulator): void {
    this.sim = sim;
    this.startMs = performance.now();
    this.line.show(`${this.name}: running`);
  }

  counter(name: string, tNs: number, componentId: string, value: number): void {
    this.inner?.counter?.(name, tNs, componentId, value);
  }

  record(
    type: components.TraceEventType,
    tNs: number,
    componentId: string,
    label: string,
    flow?: string,
  ): void {
    this.inner?.record(type, tNs, componentId, label, flow);
    if ((++this.calls & 4095) !== 0 || this.sim === null) return;
    const now = performance.now();
    if (now - this.shownMs < 100) return;
    this.shownMs = now;
    const events = this.sim.machine.env.processedEventCount;
    const seconds = (now - this.startMs) / 1000;
    const rate = seconds > 0 ? `, ${formatSi(events / seconds, "events/s")}` : "";
    this.line.show(`${this.name}: running, t = ${formatNs(tNs)}, ${groupDigits(events)} events${rate}`);
  }
}

/** One line on a terminal's stderr, rewritten in place (`\r`) and cleared at the end. */
class ProgressLine {
  private readonly output: CliOutput;
  private shown = false;

  constructor(output: CliOutput) {
    this.output = output;
  }

  show(text: string): void {
    const width = Math.max(20, (this.output.columns ?? 80) - 1);
    this.output.write(`\r\x1b[K${text.length > width ? `${text.slice(0, width - 1)}…` : text}`);
    this.shown = true;
  }

  clear(): void {
    if (this.shown) this.output.write("\r\x1b[K");
    this.shown = false;
  }
}
