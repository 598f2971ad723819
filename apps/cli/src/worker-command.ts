import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { KbError } from "@kb/errors";
import { packageVersions } from "@kb/runtime/node";
import { type JobOutcome, LOST_WORKER_DEFAULTS, RECONNECT_CAP_MS, REDIS_GIVE_UP_S } from "@kb/sweep";
import { LocalProcessPool, loadRedisSweep } from "@kb/sweep/node";
import type { QueuedJob } from "@kb/sweep/redis";
import { type Command, InvalidArgumentError } from "commander";
import { locateBench } from "./bench-files.js";
import type { CliIo, RunState } from "./run-cli.js";
import { kbBin, kbRunArgs, positiveInteger, redisUrlOf, SIGNAL_EXIT, seconds } from "./sweep-command.js";

/** Options of `kb worker` as commander parses them. */
interface WorkerOptions {
  redis?: string | true;
  queue: string;
  concurrency?: number;
  root?: string;
  cache?: string;
  lockS?: number;
  stalledCheckS?: number;
  maxLost?: number;
  idleExit?: number;
  giveUpS?: number;
}

/** Adds `kb worker --redis URL --queue NAME` to the program. */
export function addWorkerCommand(program: Command, io: CliIo, state: RunState): Command {
  return program
    .command("worker")
    .summary("run the points of sweeps queued on Redis (kb sweep --redis), on this machine")
    .description(
      "Take points of a sweep queued by `kb sweep SPEC --redis URL` and run each as `kb run --json` in its own " +
        "process, --concurrency at a time, sending the results back. A point runs only with this machine's own " +
        "bench and plug-in files, found from --root (the sweep's folder) as kb sweep finds them, never outside it " +
        "(a job naming an absolute or .. path, or any field kb sweep does not send, is refused before anything is read), " +
        "and only when their sha256 is the one the sweep planned with; otherwise the point fails with the reason. A worker that " +
        "dies mid-point loses nothing: another worker takes the point once its lock lapses. Stop with Ctrl-C " +
        "(running points are given back to the queue), or give --idle-exit to end by itself once the sweep " +
        "has no more work (a Slurm job array frees its nodes). See docs/cluster.md.",
    )
    .option(
      "--redis [url]",
      "Redis URL, redis://[user:password@]host[:port][/db] or rediss:// for TLS; without a value (or without the option) the KB_REDIS_URL environment variable, which keeps a password out of `ps`",
    )
    .requiredOption(
      "--queue <name>",
      "the sweep's queue, as kb sweep --redis prints it (kb-sweep-NAME by default)",
    )
    .option("--concurrency <n>", "points at once (default: 1)", positiveInteger)
    .option(
      "--root <dir>",
      "the sweep's folder: bench names and relative paths are found from it (default: .)",
    )
    .option(
      "--cache <dir>",
      "results cache of this machine by manifest digest (the sweep's own --cache path is not used here)",
    )
    .option(
      "--lock-s <s>",
      `lock of a running point, seconds: a dead worker's point runs elsewhere after about this plus --stalled-check-s (default: ${LOST_WORKER_DEFAULTS.lockMs / 1000})`,
      positiveNumber,
    )
    .option(
      "--stalled-check-s <s>",
      `how often this worker looks for points whose worker died, seconds (default: ${LOST_WORKER_DEFAULTS.stalledCheckMs / 1000})`,
      positiveNumber,
    )
    .option(
      "--max-lost <n>",
      `times a point may lose its worker and run again before it is recorded as failed (default: ${LOST_WORKER_DEFAULTS.maxLost})`,
      positiveInteger,
    )
    .option(
      "--idle-exit <s>",
      "exit (code 0) once, for this many seconds in a row, this worker has run nothing and the queue has no point waiting, delayed or running on any worker (default: run until stopped)",
      positiveNumber,
    )
    .option(
      "--give-up-s <s>",
      `exit (code 1) once Redis has not answered for this many seconds, so that a supervisor (systemd Restart=on-failure, a Slurm requeue) starts it again or frees the node; meanwhile it reconnects every ${RECONNECT_CAP_MS / 1000} s at most and says so once a minute; 0 waits for ever (default: ${REDIS_GIVE_UP_S})`,
      seconds,
    )
    .addHelpText(
      "after",
      "\nExamples:\n" +
        "  kb worker --redis redis://127.0.0.1:6379 --queue kb-sweep-gemm-hbm --concurrency 4 --root sweeps\n" +
        "  KB_REDIS_URL=redis://:secret@queue-host:6379 kb worker --queue kb-sweep-gemm-hbm --concurrency 8\n" +
        '  kb worker --queue kb-sweep-gemm-hbm --concurrency "$SLURM_CPUS_PER_TASK" --idle-exit 120   # in a Slurm job array',
    )
    .action(async (options: WorkerOptions) => {
      state.exitCode = await worker(options, io);
    });
}

function positiveNumber(value: string): number {
  const number = Number(value);
  if (!Number.isFinite(number) || number <= 0) {
    throw new InvalidArgumentError(`expected a number of seconds > 0, such as 15; got "${value}".`);
  }
  return number;
}

async function worker(options: WorkerOptions, io: CliIo): Promise<number> {
  // Loaded here, not at the top: BullMQ and ioredis cost every other kb command ~100 ms to load.
  const { jobFiles, jobRunner, runWorker } = await loadRedisSweep();
  const url = redisUrlOf(options.redis ?? true, "kb worker");
  const root = resolve(process.cwd(), options.root ?? ".");
  if (!(statSync(root, { throwIfNoEntry: false })?.isDirectory() ?? false)) {
    throw new KbError(
      "CLI_USAGE",
      `kb worker --root ${options.root ?? "."}: ${root} is not a folder. Give the folder with the sweep's bench and plug-in files (the sweep's folder).`,
    );
  }
  // What this worker's kb run uses: a point queued by a sweep of other versions is refused.
  const versions = packageVersions();
  const cacheDir = options.cache === undefined ? undefined : resolve(process.cwd(), options.cache);
  const concurrency = options.concurrency ?? 1;
  const topologies = mkdtempSync(join(tmpdir(), "kb-worker-"));
  const bin = kbBin();
  const benchFiles = new Map<object, string>();
  // The points' processes need no Redis password.
  const { KB_REDIS_URL: _password, ...env } = process.env;
  const pool = new LocalProcessPool({
    jobs: concurrency,
    env,
    command: (job) => ({
      args: [bin, ...kbRunArgs(job, benchFiles.get(job) ?? job.bench, topologies, root)],
      cwd: root,
    }),
  });
  const runOnPool = jobRunner(pool);
  let stopping = false;
  const runJob = async (queued: QueuedJob): Promise<JobOutcome | null> => {
    // Bench and plug-ins only from inside --root (or a bench name), with the sweep's digests.
    const files = await jobFiles(queued, root, versions, (name) => {
      try {
        return locateBench(name, root);
      } catch {
        return undefined;
      }
    });
    if ("refusal" in files) return { status: "failed", reason: files.refusal };
    const benchFile = files.benchFile;
    // The sweep machine's cache folder means nothing here: this worker's own, if any.
    const job = { ...files.job, run: { ...files.job.run, cacheDir } };
    benchFiles.set(job, benchFile);
    try {
      const outcome = await runOnPool(job);
      // Stopped with the worker, not the point's outcome: back to the queue.
      return stopping || (outcome.status === "failed" && outcome.stopped === true) ? null : outcome;
    } finally {
      benchFiles.delete(job);
    }
  };

  const started = new Map<string, number>();
  // Redis not usable: the temp folder goes before the error does.
  const running = await runWorker({
    url,
    queue: options.queue,
    concurrency,
    ...(options.lockS !== undefined ? { lockMs: options.lockS * 1000 } : {}),
    ...(options.stalledCheckS !== undefined ? { stalledCheckMs: options.stalledCheckS * 1000 } : {}),
    ...(options.maxLost !== undefined ? { maxLost: options.maxLost } : {}),
    ...(options.idleExit !== undefined ? { idleExitMs: options.idleExit * 1000 } : {}),
    ...(options.giveUpS !== undefined ? { giveUpMs: options.giveUpS * 1000 } : {}),
    runJob,
    onJob: (event) => {
      if (event.type === "refused") {
        // The reason names the job: kb worker on HOST refused job "ID": ...
        io.stderr.write(`${event.reason}\n`);
        return;
      }
      const { job } = event.queued;
      const name = `point ${job.point} (${job.key.slice(0, 12)})`;
      if (event.type === "started") {
        started.set(job.key, performance.now());
        io.stderr.write(`${name} started\n`);
        return;
      }
      if (event.type === "given back") {
        started.delete(job.key);
        io.stderr.write(`${name} given back to the queue: its kb run was stopped from outside\n`);
        return;
      }
      const seconds = ((performance.now() - (started.get(job.key) ?? performance.now())) / 1000).toFixed(1);
      started.delete(job.key);
      io.stderr.write(
        event.outcome.status === "ok"
          ? `${name} ok in ${seconds} s\n`
          : `${name} FAILED in ${seconds} s: ${event.outcome.reason.split("\n")[0]}\n`,
      );
    },
    onError: (message) => io.stderr.write(`kb worker: ${message}\n`),
  }).catch((error: unknown) => {
    rmSync(topologies, { recursive: true, force: true });
    throw error;
  });
  const idleExit = options.idleExit === undefined ? "" : `; exits after ${options.idleExit} s with no work`;
  io.stderr.write(
    `kb worker: taking points of queue ${options.queue} on ${running.target.redacted}, ${concurrency} at a time, files from ${root}. Ctrl-C stops${idleExit}.\n`,
  );

  const signals = signalOnce();
  try {
    const first = await Promise.race([
      signals.signal,
      running.idle.then(() => "idle" as const),
      running.gaveUp,
    ]);
    if (typeof first === "object") {
      // Redis gone too long: its points are lost with it or come back once their locks lapse.
      stopping = true;
      await Promise.all([pool.close(), running.close(true)]);
      throw first;
    }
    if (first === "idle") {
      io.stderr.write(
        `kb worker: nothing run for ${options.idleExit} s and no point waiting, delayed or running on queue ${options.queue}: exiting.\n`,
      );
      // Not forced: a point taken in the meantime still runs and reports, unless a signal comes.
      const closed = running.close(false).then(() => "closed" as const);
      const then = await Promise.race([closed, signals.signal]);
      if (then === "closed") {
        await pool.close();
        return 0;
      }
      stopping = true;
      io.stderr.write(`kb worker: ${then}: stopping; running points go back to the queue.\n`);
      // The pool's processes stopped, their points are given back and the close ends.
      await pool.close();
      await closed;
      return SIGNAL_EXIT[then];
    }
    stopping = true;
    io.stderr.write(`kb worker: ${first}: stopping; running points go back to the queue.\n`);
    // Forced: the running points are not waited for but handed back for another worker.
    await Promise.all([pool.close(), running.close(true)]);
    return SIGNAL_EXIT[first];
  } finally {
    signals.dispose();
    rmSync(topologies, { recursive: true, force: true });
  }
}

/**
 * The first SIGINT or SIGTERM, as a promise. Its handlers go once one came (a second Ctrl-C kills
 * at once, as without handlers) or at `dispose`.
 */
function signalOnce(): { signal: Promise<keyof typeof SIGNAL_EXIT>; dispose: () => void } {
  const names = Object.keys(SIGNAL_EXIT) as (keyof typeof SIGNAL_EXIT)[];
  const handlers: [keyof typeof SIGNAL_EXIT, () => void][] = [];
  const dispose = () => {
    for (const [name, handler] of handlers) process.off(name, handler);
  };
  const signal = new Promise<keyof typeof SIGNAL_EXIT>((resolveSignal) => {
    for (const name of names) {
      const handler = () => {
        dispose();
        resolveSignal(name);
      };
      handlers.push([name, handler]);
      process.on(name, handler);
    }
  });
  return { signal, dispose };
}
