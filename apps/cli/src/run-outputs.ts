import { existsSync, realpathSync, renameSync, rmSync, statSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { KbError } from "@kb/errors";
import type { OpLogSink, OpRecord } from "@kb/oplog";

// The output files of one `kb run`: checked before the run, written to temporary files beside
// them, and renamed together at the end, so a run leaves all of them or none.

/** One output file of a run. */
export interface RunOutput {
  /** The option that names it (`--trace`), for messages. */
  readonly option: string;
  /** The path as given. */
  readonly path: string;
}

/** An output file, checked, with its temporary file. */
export interface PlannedOutput extends RunOutput {
  /** The absolute path it ends up at. */
  readonly target: string;
  /** The temporary file written until the run succeeded: `<target>.tmp-<pid>-<option>`. */
  readonly temp: string;
}

/** Exit codes of a run stopped by a signal (128 + the signal's number), as shells report them. */
const SIGNAL_EXIT = { SIGINT: 130, SIGTERM: 143 } as const;

/**
 * The output files of a run. {@link RunOutputs.plan} refuses, before anything runs, an output that
 * is a directory, lies in a directory that does not exist, is one of the run's inputs (the
 * topology, the bench) or is named twice. Each output is written to its own temporary file beside
 * it (the writers get {@link PlannedOutput.temp}); {@link commit} renames them all once the run
 * succeeded, {@link discard} removes them. While a run is under way, SIGINT and SIGTERM remove the
 * temporary files and exit with 130 / 143 ({@link onSignals}).
 */
export class RunOutputs {
  private state: "open" | "committed" | "discarded" = "open";
  private readonly failures = new Map<string, KbError>();

  private constructor(readonly outputs: readonly PlannedOutput[]) {}

  /**
   * Checks `outputs` against each other and against `inputs` (paths of files the run reads).
   * Throws `CLI_USAGE` naming the option and the path, with what to do.
   */
  static plan(outputs: readonly RunOutput[], inputs: readonly string[], cwd: string): RunOutputs {
    const inputPaths = new Set(inputs.map((input) => canonical(resolve(cwd, input))));
    const seen = new Map<string, string>();
    const planned = outputs.map((output): PlannedOutput => {
      const target = resolve(cwd, output.path);
      const where = `${output.option} ${output.path}`;
      if (existsSync(target) && statSync(target).isDirectory()) {
        throw usage(
          `${where} is a directory; name a file in it, such as ${output.path.replace(/\/$/, "")}/run.json.`,
          output.path,
        );
      }
      const directory = dirname(target);
      if (!existsSync(directory) || !statSync(directory).isDirectory()) {
        throw usage(
          `${where}: the directory ${directory} does not exist; create it first (mkdir -p ${directory}).`,
          output.path,
        );
      }
      const key = canonical(target);
      if (inputPaths.has(key)) {
        throw usage(
          `${where} is an input of this run; writing it would overwrite it. Name another file.`,
          output.path,
        );
      }
      const other = seen.get(key);
      if (other !== undefined) {
        throw usage(
          `${where} is also the file of ${other}; each output needs a file of its own.`,
          output.path,
        );
      }
      seen.set(key, output.option);
      const temp = `${target}.tmp-${process.pid}-${output.option.replace(/^-+/, "")}`;
      return { ...output, target, temp };
    });
    return new RunOutputs(planned);
  }

  /** The planned output of `option`, or undefined when the run has none. */
  get(option: string): PlannedOutput | undefined {
    return this.outputs.find((output) => output.option === option);
  }

  /**
   * Records that `option`'s output cannot be written (a full disk): its temporary files are
   * removed now, {@link commit} leaves its target alone and returns the failure. The run goes on:
   * its results are kept and printed.
   */
  fail(option: string, error: unknown): void {
    const output = this.get(option);
    if (output === undefined || this.failures.has(option)) return;
    removeTemps([output]);
    const reason = error instanceof KbError ? (error.cause ?? error) : error;
    const message = reason instanceof Error ? reason.message : String(reason);
    this.failures.set(
      option,
      new KbError(
        "OUTPUT_UNWRITABLE",
        `cannot write ${output.target}: ${message.replace(/\.$/, "")}. No ${option} file was written; the run's results are printed above. Free space or name another file, and run again.`,
        { context: { file: output.path }, cause: error },
      ),
    );
  }

  /**
   * Renames every temporary file to its target: the run succeeded. Returns the outputs that could
   * not be written (from {@link fail}, or a rename that failed), as `OUTPUT_UNWRITABLE` errors.
   */
  commit(): KbError[] {
    if (this.state !== "open") return [];
    this.state = "committed";
    for (const output of this.outputs) {
      if (this.failures.has(output.option) || !existsSync(output.temp)) continue;
      try {
        renameSync(output.temp, output.target);
      } catch (error) {
        this.fail(output.option, error);
      }
    }
    return [...this.failures.values()];
  }

  /**
   * `sink` (the op-log file's) as an optional output of `option`: a write, close or abort that
   * fails is {@link fail}ed, not thrown into the run, and later records are dropped.
   */
  optionalSink(option: string, sink: OpLogSink): OpLogSink {
    const failed = (error: unknown): void => {
      try {
        sink.abort?.();
      } catch {
        // Its temporary files are removed by fail().
      }
      this.fail(option, error);
    };
    const guard = (action: () => void | Promise<void>): void | Promise<void> => {
      if (this.failures.has(option)) return;
      try {
        const done = action();
        if (done instanceof Promise) return done.catch(failed);
      } catch (error) {
        failed(error);
      }
    };
    return {
      write: (record: OpRecord) => {
        guard(() => sink.write(record));
      },
      close: () => guard(() => sink.close?.()),
      abort: () => {
        guard(() => sink.abort?.());
      },
    };
  }

  /** Removes every temporary file (and a writer's own `.tmp-*` beside it); targets are left untouched. */
  discard(): void {
    if (this.state !== "open") return;
    this.state = "discarded";
    removeTemps(this.outputs);
  }

  /**
   * Until the returned function is called: on SIGINT or SIGTERM, removes the temporary files,
   * writes `interrupted` to `stderr` and exits with 130 or 143. The handler runs when the event
   * loop gets control: the simulator yields to it between slices of its run.
   */
  onSignals(stderr: { write(text: string): unknown }): () => void {
    const handlers = Object.entries(SIGNAL_EXIT).map(([signal, code]) => {
      const handler = () => {
        removeTemps(this.outputs);
        stderr.write(`\nkb run: interrupted (${signal}); no output file was written.\n`);
        process.exit(code);
      };
      process.once(signal, handler);
      return [signal, handler] as const;
    });
    return () => {
      for (const [signal, handler] of handlers) process.off(signal, handler);
    };
  }
}

function removeTemps(outputs: readonly PlannedOutput[]): void {
  for (const output of outputs) {
    rmSync(output.temp, { force: true });
    // A writer that makes its own temporary file beside the path it was given (JsonlSink).
    rmSync(`${output.temp}.tmp-${process.pid}`, { force: true });
  }
}

/** The path with symbolic links resolved (two names of one file compare equal), also for a new file. */
function canonical(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    try {
      return join(realpathSync(dirname(path)), basename(path));
    } catch {
      return path;
    }
  }
}

function usage(message: string, file: string): KbError {
  return new KbError("CLI_USAGE", message, { context: { file } });
}
