import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { groupDigits, KbError } from "@kb/errors";
import { packageVersions } from "@kb/runtime/node";
import {
  describeValues,
  designSize,
  type Executor,
  gridShape,
  REDIS_GIVE_UP_S,
  SWEEP_LIMITS,
  type SweepJob,
  type SweepSpec,
} from "@kb/sweep";
import {
  isPath,
  LocalProcessPool,
  loadRedisSweep,
  loadSweepSpec,
  outputError,
  RESULTS_CSV,
  RESULTS_JSONL,
  runSweep,
  type SweepProgress,
} from "@kb/sweep/node";
import { type Command, InvalidArgumentError } from "commander";
import { locateBench, locateTopology } from "./bench-files.js";
import type { CliIo, RunState } from "./run-cli.js";
import { SweepProgressView } from "./sweep-progress.js";

/** Options of `kb sweep` as commander parses them. */
interface SweepOptions {
  out?: string;
  jobs?: number;
  cache?: string;
  retryFailed?: boolean;
  dryRun?: boolean;
  redis?: string | true;
  queue?: string;
  giveUpS?: number;
}

/** Exit codes of an interrupted sweep, as a shell reports a signal. */
export const SIGNAL_EXIT = { SIGINT: 130, SIGTERM: 143 } as const;

/** Adds `kb sweep SPEC` to the program. */
export function addSweepCommand(program: Command, io: CliIo, state: RunState): Command {
  return program
    .command("sweep")
    .summary("run a bench over a design space: one kb run per point, a results table")
    .description(
      "Run the points of a sweep spec (a YAML file: a base bench, topology and params; axes over topology paths, " +
        "overrides, impls, bench params and plug-ins; a grid, random or Latin-hypercube design with a seed; " +
        "constraints; the metrics to keep). Each point runs as `kb run --json` in its own process, --jobs at a " +
        "time; a crash, an out-of-memory or a timed-out point is recorded as failed. Rows are appended to " +
        "results.jsonl and results.csv as points finish; run the same command again after an interrupt and " +
        "the finished points are not run again. With --redis the points are queued on Redis instead and run by " +
        "`kb worker`s on any machines (see docs/cluster.md).",
    )
    .argument("<spec>", "sweep spec YAML file (see packages/sweep/README.md)")
    .option("--out <dir>", "results folder (default: results/NAME beside the spec)")
    .option(
      "--jobs <n>",
      `points at once, 1 to ${SWEEP_LIMITS.maxJobs} (default: the machine's cores)`,
      jobsOption,
    )
    .option(
      "--cache <dir>",
      "results cache by manifest digest, passed to each point's kb run: a point run before is not simulated again",
    )
    .option("--retry-failed", "run the points recorded as failed again (their rows are replaced)")
    .option(
      "--dry-run",
      `print the points the design gives and exit (a design of more than ${DRY_RUN_LISTED} points: their count only)`,
    )
    .option(
      "--redis [url]",
      "queue the points on Redis for `kb worker`s (BullMQ) instead of running them here: redis://[user:password@]host[:port][/db] or rediss:// for TLS; without a value, the KB_REDIS_URL environment variable",
    )
    .option("--queue <name>", "the queue of --redis (default: kb-sweep-NAME, NAME the spec's name)")
    .option(
      "--give-up-s <s>",
      `with --redis: exit (code 1) once Redis has not answered for this many seconds, the rows so far kept; meanwhile it reconnects and says so once a minute; 0 waits for ever (default: ${REDIS_GIVE_UP_S})`,
      seconds,
    )
    .addHelpText(
      "after",
      "\nExamples:\n" +
        "  kb sweep sweeps/gemm-hbm.yaml --jobs 2\n" +
        "  kb sweep sweeps/gemm-hbm.yaml --dry-run\n" +
        "  kb sweep my-sweep.yaml --out results/today --cache ~/.cache/kb\n" +
        "  kb sweep sweeps/gemm-hbm.yaml --redis redis://queue-host:6379   (then kb worker on each machine)",
    )
    .action(async (specArg: string, options: SweepOptions) => {
      state.exitCode = await sweep(specArg, options, io);
    });
}

/** A number of seconds >= 0 of an option. */
export function seconds(value: string): number {
  const number = Number(value);
  if (!Number.isFinite(number) || number < 0) {
    throw new InvalidArgumentError(
      `expected a number of seconds >= 0, such as 300 (0: for ever); got "${value}".`,
    );
  }
  return number;
}

/** Points of a design `kb sweep --dry-run` lists one by one; a larger design is counted only. */
export const DRY_RUN_LISTED = 1000;

/** A design in words: `grid: a 3 x b 4`, `random: 500 points`. */
function designText(spec: SweepSpec): string {
  if (spec.design.kind !== "grid") return `${spec.design.kind}: ${groupDigits(spec.design.points)} points`;
  return `grid: ${gridShape(spec.axes)}`;
}

/** `--jobs`: a whole number from 1 to `SWEEP_LIMITS.maxJobs`. */
function jobsOption(value: string): number {
  const number = positiveInteger(value);
  if (number > SWEEP_LIMITS.maxJobs) {
    throw new InvalidArgumentError(
      `expected a whole number from 1 to ${SWEEP_LIMITS.maxJobs} (points at once on this machine); got "${value}".`,
    );
  }
  return number;
}

/** A whole number >= 1 of an option. */
export function positiveInteger(value: string): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 1) {
    throw new InvalidArgumentError(`expected a whole number >= 1, such as 2; got "${value}".`);
  }
  return number;
}

async function sweep(specArg: string, options: SweepOptions, io: CliIo): Promise<number> {
  const cwd = process.cwd();
  const specFile = resolve(cwd, specArg);
  const spec = loadSweepSpec(specFile);
  const specDir = dirname(specFile);
  const benchFile = locateBench(spec.bench, specDir);
  const topologyFile = locateTopology(spec.topology, specDir);
  const outDir = resolve(cwd, options.out ?? join(specDir, "results", spec.name));
  if (options.dryRun === true) {
    const size = designSize(spec.axes, spec.design);
    if (size > DRY_RUN_LISTED) {
      // Counted, not made: planning a large design takes memory and time a dry run should not.
      io.stdout.write(
        `${spec.name}: ${groupDigits(size)} points in the design (${designText(spec)}); not listed: --dry-run lists designs of up to ${groupDigits(DRY_RUN_LISTED)} points. Constraints and duplicates are applied when the sweep runs.\n`,
      );
      return 0;
    }
    const { planSweep } = await import("@kb/sweep");
    const { readTopologyInput } = await import("@kb/sweep/node");
    const plan = planSweep(spec, readTopologyInput(topologyFile));
    for (const point of plan.points)
      io.stdout.write(`point ${point.index}: ${describeValues(point.values)}\n`);
    for (const point of plan.skipped) {
      io.stdout.write(
        `point ${point.index}: skipped (${point.constraint}): ${describeValues(point.values)}\n`,
      );
    }
    io.stdout.write(
      `${plan.points.length} points to run, ${plan.skipped.length} skipped by constraints, ${plan.duplicates} duplicates dropped\n`,
    );
    return 0;
  }

  let executor: Executor;
  let waiting = "";
  let redisExecutor: { whenQueued(): Promise<void> } | undefined;
  let gaveUp: KbError | undefined;
  const controller = new AbortController();
  /** Why the sweep stopped writing its folder, when it did. */
  let outputFailure: unknown;
  if (options.redis === undefined) {
    if (options.queue !== undefined) throw usage("--queue names the queue of --redis: add --redis URL.");
    if (options.giveUpS !== undefined)
      throw usage("--give-up-s is for the Redis of --redis: add --redis URL.");
    const bin = kbBin();
    const topologies = join(outDir, "topologies");
    executor = new LocalProcessPool({
      ...(options.jobs !== undefined ? { jobs: options.jobs } : {}),
      command: (job) => {
        try {
          return { args: [bin, ...kbRunArgs(job, benchFile, topologies, specDir)], cwd: specDir };
        } catch (error) {
          // The sweep's own output failed (a full disk), not the point: stop, record nothing.
          outputFailure ??= error;
          controller.abort();
          throw error;
        }
      },
    });
  } else {
    if (options.jobs !== undefined) {
      throw usage("--jobs is for points run here; with --redis each kb worker has its --concurrency.");
    }
    if (options.cache !== undefined) {
      throw usage("--cache is for points run here; with --redis give each kb worker its own --cache DIR.");
    }
    const { isBenchName, RedisExecutor, queueNameOf, rootRelative } = await loadRedisSweep();
    if (!isBenchName(spec.bench) && rootRelative(specDir, spec.bench) === null) {
      throw new KbError(
        "SWEEP_QUEUE",
        `bench ${spec.bench} is outside the spec's folder ${specDir}, and kb workers read files only inside their --root, which stands for that folder. Move the bench (or the spec) so that the bench is inside it, name a bench (benches/NAME.ts), or run the sweep without --redis.`,
        { context: { file: specFile } },
      );
    }
    const queue = options.queue ?? queueNameOf(spec.name);
    const redis = await RedisExecutor.open({
      url: redisUrlOf(options.redis, "kb sweep"),
      queue,
      root: specDir,
      versions: packageVersions(),
      ...(options.giveUpS !== undefined ? { giveUpMs: options.giveUpS * 1000 } : {}),
      onNotice: (line) => io.stderr.write(`kb sweep: ${line}\n`),
    });
    executor = redis;
    redisExecutor = redis;
    // Redis gone too long: the sweep stops as on Ctrl-C (the rows so far kept), then says why.
    void redis.gaveUp.then((error) => {
      gaveUp = error;
      controller.abort();
    });
    waiting = `queued on ${redis.target.redacted}, queue ${queue}: run \`kb worker --redis URL --queue ${queue} --root ${specDir}\` on the machines (--root: a folder with this spec's bench and plug-in files; see docs/cluster.md)\n`;
  }
  let signalled: keyof typeof SIGNAL_EXIT | null = null;
  const handlers = (Object.keys(SIGNAL_EXIT) as (keyof typeof SIGNAL_EXIT)[]).map((signal) => {
    const handler = () => {
      signalled = signal;
      controller.abort();
    };
    process.once(signal, handler);
    return [signal, handler] as const;
  });
  const view = new SweepProgressView(spec.name, {
    tty: io.stderr.isTTY === true,
    queued: options.redis !== undefined,
  });
  const progress = (event: SweepProgress) => {
    io.stderr.write(view.text(event));
    // Said once the jobs are on Redis (the submits follow this event in the same tick), not before.
    if (event.type === "planned" && event.total > event.resumed && waiting !== "") {
      const line = waiting;
      void Promise.resolve()
        .then(() => redisExecutor?.whenQueued())
        .then(() => io.stderr.write(line));
    }
  };
  try {
    const summary = await runSweep({
      spec,
      benchFile,
      topologyFile,
      outDir,
      executor,
      pluginRoot: specDir,
      cacheDir: options.cache === undefined ? undefined : resolve(cwd, options.cache),
      retryFailed: options.retryFailed === true,
      signal: controller.signal,
      onProgress: progress,
      onWarning: (message) => io.stderr.write(`kb sweep: warning: ${message}\n`),
    });
    if (outputFailure !== undefined) throw outputFailure;
    const files = `${join(outDir, RESULTS_CSV)} and ${RESULTS_JSONL}`;
    if (summary.interrupted && gaveUp !== undefined) {
      io.stderr.write(
        `kb sweep: ${summary.ok + summary.failed} of ${summary.total} points are in ${files}; run the same command again to resume once Redis answers.\n`,
      );
      throw gaveUp;
    }
    if (summary.interrupted) {
      io.stderr.write(
        `kb sweep: interrupted (${signalled ?? "abort"}); ${summary.ok + summary.failed} of ${summary.total} points are in ${files}. Run the same command again to resume.\n`,
      );
      return SIGNAL_EXIT[signalled ?? "SIGINT"];
    }
    io.stdout.write(
      `${spec.name}: ${summary.total} points (${summary.resumed} from an earlier run, ${summary.ran} run now): ${summary.ok} ok, ${summary.failed} failed` +
        `${summary.skipped > 0 ? `; ${summary.skipped} skipped by constraints` : ""}. Table: ${files}\n`,
    );
    return 0;
  } finally {
    for (const [signal, handler] of handlers) process.off(signal, handler);
  }
}

/**
 * `kb run` of a job: the point's topology written as a file, its params and plug-ins as options.
 * A topology file that cannot be written is a `SWEEP_OUTPUT` error (`outputError`).
 */
export function kbRunArgs(job: SweepJob, benchFile: string, topologyDir: string, specDir: string): string[] {
  // JSON is YAML: the point's topology, validated by kb run like any topology file.
  const topologyFile = join(topologyDir, `${job.key.slice(0, 16)}.yaml`);
  try {
    mkdirSync(topologyDir, { recursive: true });
    writeFileSync(topologyFile, `${JSON.stringify(job.inputs.topology, null, 2)}\n`);
  } catch (error) {
    throw outputError(topologyFile, error);
  }
  const run = job.run;
  return [
    "run",
    benchFile,
    "--topology",
    topologyFile,
    ...Object.entries(job.inputs.params).flatMap(([key, value]) => [
      "--param",
      `${key}=${JSON.stringify(value)}`,
    ]),
    ...job.inputs.plugins.flatMap((plugin) => [
      "--plugin",
      isPath(plugin) ? resolve(specDir, plugin) : plugin,
    ]),
    "--json",
    ...(run.verify ? ["--verify"] : []),
    ...(run.maxEvents !== undefined ? ["--max-events", String(run.maxEvents)] : []),
    ...(run.maxSimTimeNs !== undefined ? ["--max-sim-time", String(run.maxSimTimeNs)] : []),
    ...(run.maxStallCalls !== undefined ? ["--max-stall-calls", String(run.maxStallCalls)] : []),
    ...(run.cacheDir !== undefined ? ["--cache", run.cacheDir] : []),
  ];
}

/**
 * The `kb` executable the points run: this build's bin.js, or, when kb runs from its sources
 * (tests), the built one beside them.
 */
export function kbBin(): string {
  const here = fileURLToPath(new URL("./bin.js", import.meta.url));
  if (existsSync(here)) return here;
  const built = fileURLToPath(new URL("../dist/bin.js", import.meta.url));
  if (existsSync(built)) return built;
  throw new Error(
    `kb sweep runs each point with kb's bin.js; neither ${here} nor ${built} exists (build @kb/cli).`,
  );
}

/**
 * The Redis URL of `--redis [url]`: the value, or without one the KB_REDIS_URL environment
 * variable (a password there stays out of `ps`). `command` names who asks, for the error.
 */
export function redisUrlOf(option: string | true, command: string): string {
  if (option !== true) return option;
  const fromEnvironment = process.env.KB_REDIS_URL;
  if (fromEnvironment !== undefined && fromEnvironment !== "") return fromEnvironment;
  throw usage(
    `${command} needs a Redis URL: --redis redis://HOST:PORT, or the KB_REDIS_URL environment variable (for a password: it stays out of ps).`,
  );
}

function usage(message: string): KbError {
  return new KbError("CLI_USAGE", message);
}
