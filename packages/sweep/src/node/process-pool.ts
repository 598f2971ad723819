import { type ChildProcess, spawn } from "node:child_process";
import { availableParallelism } from "node:os";
import type { Executor, ExecutorEvent, JobOutcome, SweepJob } from "../executor.js";
import { SWEEP_LIMITS, timeoutMs } from "../limits.js";

/** How a job becomes a process: the Node script and its arguments, and where it runs. */
export interface PointCommand {
  /** Arguments after `node [--max-old-space-size=N]`: a script and its arguments. */
  readonly args: readonly string[];
  readonly cwd: string;
}

/** Options of {@link LocalProcessPool}. */
export interface LocalProcessPoolOptions {
  /** Points at once (default: the machine's cores, `os.availableParallelism()`). */
  readonly jobs?: number;
  /** The command of a job; it prints the results JSON on stdout and exits 0 (1 for a failed check). */
  readonly command: (job: SweepJob) => PointCommand;
  /** The Node executable (default: this process's). */
  readonly node?: string;
  /**
   * The points' environment (default: this process's): its own string values only, in a fresh
   * object ({@link childEnvironment}), `NO_COLOR=1` added.
   */
  readonly env?: NodeJS.ProcessEnv;
}

/** The last part of a failed point's stderr kept as its reason. */
const REASON_CHARS = 2000;

/**
 * An executor that runs each point in its own Node process, `jobs` at a time, with the job's
 * heap limit (`--max-old-space-size`) and wall-time limit (the process is killed). Whatever
 * becomes of the process is an outcome: results JSON on stdout and exit 0 is `ok`; an exit 1
 * with results (a failed --verify) is `failed` with the results; out of memory, a timeout, a
 * signal or an error message are `failed` with that reason. Nothing a point does can stop the
 * sweep.
 */
export class LocalProcessPool implements Executor {
  readonly concurrency: number;
  readonly #options: LocalProcessPoolOptions;
  readonly #queue: SweepJob[] = [];
  readonly #running = new Set<ChildProcess>();
  readonly #listeners: ((event: ExecutorEvent) => void)[] = [];
  #closed = false;

  constructor(options: LocalProcessPoolOptions) {
    this.#options = options;
    this.concurrency = Math.max(1, Math.floor(options.jobs ?? availableParallelism()));
  }

  submit(job: SweepJob): void {
    if (this.#closed) return;
    this.#queue.push(job);
    this.#startNext();
  }

  onEvent(listener: (event: ExecutorEvent) => void): void {
    this.#listeners.push(listener);
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#queue.length = 0;
    const exits = [...this.#running].map(
      (child) =>
        new Promise<void>((resolve) =>
          child.exitCode !== null ? resolve() : child.once("close", () => resolve()),
        ),
    );
    for (const child of this.#running) child.kill("SIGKILL");
    await Promise.all(exits);
  }

  #emit(event: ExecutorEvent): void {
    for (const listener of this.#listeners) listener(event);
  }

  #startNext(): void {
    while (!this.#closed && this.#running.size < this.concurrency && this.#queue.length > 0) {
      this.#start(this.#queue.shift() as SweepJob);
    }
  }

  #start(job: SweepJob): void {
    const limitMs = job.run.timeoutS === undefined ? null : timeoutMs(job.run.timeoutS);
    if (job.run.timeoutS !== undefined && limitMs === null) {
      // A longer timer fires at once: the point would be killed and recorded as timed out.
      const reason = `run.timeoutS ${job.run.timeoutS} is out of range: expected a number in (0, ${SWEEP_LIMITS.maxTimeoutS}] s`;
      this.#emit({ type: "finished", job, outcome: { status: "failed", reason } });
      return;
    }
    let command: PointCommand;
    try {
      command = this.#options.command(job);
    } catch (error) {
      this.#emit({ type: "finished", job, outcome: { status: "failed", reason: errorText(error) } });
      return;
    }
    const child = spawn(
      this.#options.node ?? process.execPath,
      [`--max-old-space-size=${job.run.memoryMb}`, ...command.args],
      {
        cwd: command.cwd,
        stdio: ["ignore", "pipe", "pipe"],
        env: childEnvironment(this.#options.env ?? process.env, { NO_COLOR: "1" }),
      },
    );
    this.#running.add(child);
    this.#emit({ type: "started", job });
    const stdout: Buffer[] = [];
    let stderr = "";
    child.stdout?.on("data", (chunk: Buffer) => stdout.push(chunk));
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-64 * 1024);
    });
    let timedOut = false;
    const timer =
      limitMs === null
        ? null
        : setTimeout(() => {
            timedOut = true;
            child.kill("SIGKILL");
          }, limitMs);
    let spawnError: Error | null = null;
    child.on("error", (error) => (spawnError = error));
    child.on("close", (code, signal) => {
      if (timer !== null) clearTimeout(timer);
      this.#running.delete(child);
      if (this.#closed) return;
      const outcome = outcomeOf({
        code,
        signal,
        stdout: Buffer.concat(stdout).toString(),
        stderr,
        timedOut,
        spawnError,
        job,
      });
      this.#emit({ type: "finished", job, outcome });
      this.#startNext();
    });
  }
}

/**
 * A child process's environment: a fresh null-prototype object of `parent`'s own string values,
 * then `added`. Node's `spawn` copies an environment with for...in, inherited keys included, so
 * an environment that inherits from Object.prototype would hand a child whatever a polluted
 * prototype holds (NODE_OPTIONS: code that runs in every point).
 */
export function childEnvironment(
  parent: Readonly<NodeJS.ProcessEnv>,
  added: Readonly<Record<string, string>> = {},
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = Object.create(null);
  for (const source of [parent, added]) {
    for (const key of Object.keys(source)) {
      const value = source[key];
      if (typeof value === "string") env[key] = value;
    }
  }
  return env;
}

interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly timedOut: boolean;
  readonly spawnError: Error | null;
  readonly job: SweepJob;
}

/** What a point's exit means; see {@link LocalProcessPool}. */
export function outcomeOf(exit: Exit): JobOutcome {
  if (exit.spawnError !== null)
    return { status: "failed", reason: `could not start: ${exit.spawnError.message}` };
  if (exit.timedOut)
    return { status: "failed", reason: `timed out after ${exit.job.run.timeoutS} s (killed)` };
  if (/heap out of memory|Allocation failed|ERR_WORKER_OUT_OF_MEMORY/.test(exit.stderr)) {
    return {
      status: "failed",
      reason: `out of memory (heap limit ${exit.job.run.memoryMb} MB; raise run.memoryMb)`,
    };
  }
  if (exit.signal !== null) {
    const reason = `crashed: killed by ${exit.signal}${tail(exit.stderr, ": ")}`;
    return STOP_SIGNALS.has(exit.signal)
      ? { status: "failed", reason, stopped: true }
      : { status: "failed", reason };
  }
  const results = parseResults(exit.stdout);
  if (exit.code === 0) {
    return results === undefined
      ? { status: "failed", reason: `exited 0 without a results JSON${tail(exit.stderr, ": ")}` }
      : { status: "ok", results };
  }
  const verification = (results as { verification?: { pass?: boolean } } | undefined)?.verification;
  const phaseCheck = (results as { phaseCheck?: { firstDifference?: unknown } } | undefined)?.phaseCheck;
  const reason =
    verification?.pass === false
      ? "verification FAIL"
      : phaseCheck?.firstDifference != null
        ? "phase check: phase 1 and phase 2 differ"
        : `exit code ${exit.code}${tail(exit.stderr, ": ")}`;
  return {
    status: "failed",
    reason,
    ...(results !== undefined ? { results } : {}),
    ...(STOP_EXIT_CODES.has(exit.code ?? 0) ? { stopped: true as const } : {}),
  };
}

/** Signals that stop a point from outside (Ctrl-C, a scheduler's or systemd's stop): `stopped`. */
const STOP_SIGNALS: ReadonlySet<string> = new Set(["SIGINT", "SIGTERM", "SIGHUP"]);
/** kb run's exits after catching SIGINT / SIGTERM, as a shell reports them. */
const STOP_EXIT_CODES: ReadonlySet<number> = new Set([130, 143]);

function parseResults(stdout: string): unknown {
  if (stdout.trim() === "") return undefined;
  try {
    return JSON.parse(stdout) as unknown;
  } catch {
    return undefined;
  }
}

/** The end of a stderr text, trimmed, after `prefix`; empty when there is none. */
function tail(stderr: string, prefix: string): string {
  const text = stderr.trim();
  if (text === "") return "";
  return prefix + (text.length > REASON_CHARS ? `...${text.slice(-REASON_CHARS)}` : text);
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
