import {
  closeSync,
  linkSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { KbError } from "@kb/errors";
import { outputError } from "../output-error.js";

/** The lock file of a results folder: one sweep writes a folder at a time. */
export const LOCK_FILE = ".kb-sweep.lock";

/** Who holds a results folder's lock. */
export interface LockHolder {
  readonly pid: number;
  readonly host: string;
}

/**
 * The lock of a sweep's results folder: a file created with O_EXCL holding the sweep's pid and
 * host, so two sweeps on one `--out` cannot both append rows (each ran every point and wrote
 * every row twice).
 *
 * **Gotchas**: a lock left by a process that is gone (killed with SIGKILL, a second Ctrl-C) is
 * taken over when its host is this one and its pid no longer runs, with a warning; on another
 * host kb cannot tell, and says to remove the file. The lock is removed by {@link release}
 * (runSweep calls it on every way out) and, as a last resort, when the process exits.
 */
export class OutLock {
  readonly file: string;
  #held = true;
  readonly #onExit = () => this.release();

  private constructor(file: string) {
    this.file = file;
    process.once("exit", this.#onExit);
  }

  /**
   * Takes the lock of `dir` (created if missing). A `SWEEP_OUTPUT` error when another sweep holds
   * it (naming its pid and host) or when the folder cannot be written; `onWarning` hears of a
   * stale lock taken over.
   */
  static acquire(dir: string, onWarning: (message: string) => void = () => {}): OutLock {
    const file = join(dir, LOCK_FILE);
    try {
      mkdirSync(dir, { recursive: true });
    } catch (error) {
      throw outputError(dir, error);
    }
    const me: LockHolder = { pid: process.pid, host: hostname() };
    if (create(file, me)) return new OutLock(file);
    const holder = readHolder(file);
    if (holder !== undefined && holder.host === me.host && !running(holder.pid)) {
      // Moved aside, not deleted: of two sweeps taking over at once, the second moves the
      // first's new lock, sees it is not the stale one, and puts it back.
      const aside = `${file}.stale-${process.pid}`;
      try {
        renameSync(file, aside);
      } catch {
        throw held(dir, file, readHolder(file));
      }
      const moved = readHolder(aside);
      if (moved?.pid === holder.pid && moved.host === holder.host) {
        unlinkSync(aside);
        if (create(file, me)) {
          onWarning(
            `took over the lock of ${dir}: the kb sweep that left it (pid ${holder.pid} on ${holder.host}) no longer runs.`,
          );
          return new OutLock(file);
        }
      } else {
        linkSync(aside, file);
        unlinkSync(aside);
      }
    }
    throw held(dir, file, readHolder(file));
  }

  /** Removes the lock (once; only while it is still this process's). */
  release(): void {
    if (!this.#held) return;
    this.#held = false;
    process.off("exit", this.#onExit);
    const holder = readHolder(this.file);
    if (holder?.pid !== process.pid || holder.host !== hostname()) return;
    try {
      unlinkSync(this.file);
    } catch {
      // Removed already: nothing to release.
    }
  }
}

/** Creates the lock file with O_EXCL; false when it exists. */
function create(file: string, holder: LockHolder): boolean {
  let fd: number;
  try {
    fd = openSync(file, "wx");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw outputError(file, error);
  }
  try {
    writeSync(fd, `${JSON.stringify(holder)}\n`);
  } catch (error) {
    closeSync(fd);
    unlinkSync(file);
    throw outputError(file, error);
  }
  closeSync(fd);
  return true;
}

function readHolder(file: string): LockHolder | undefined {
  try {
    const parsed = JSON.parse(readFileSync(file, "utf8")) as Partial<LockHolder> | null;
    return Number.isInteger(parsed?.pid) && (parsed?.pid as number) > 0 && typeof parsed?.host === "string"
      ? { pid: parsed.pid as number, host: parsed.host }
      : undefined;
  } catch {
    return undefined;
  }
}

/** Whether a process of this host runs with `pid` (one of another user counts). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

function held(dir: string, file: string, holder: LockHolder | undefined): KbError {
  const who =
    holder === undefined ? "another kb sweep" : `another kb sweep (pid ${holder.pid} on ${holder.host})`;
  return new KbError(
    "SWEEP_OUTPUT",
    `${who} is writing to ${dir}: wait for it to end, or give this sweep another --out. If no such sweep runs, remove ${file}.`,
    { context: { file } },
  );
}
