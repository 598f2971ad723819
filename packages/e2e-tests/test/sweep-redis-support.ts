import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

// For sweep-redis-e2e.test.ts: the built kb as processes of their own process group (a worker's
// `kb run` children go with it when the group is killed), their output kept, and the sweep spec
// and table helpers.

export const repoRoot = fileURLToPath(new URL("../../../", import.meta.url));
/** The built kb (the tests skip without it; CI builds before vitest). */
export const kbBinJs = join(repoRoot, "apps", "cli", "dist", "bin.js");

/** A kb process started by {@link startKb}. */
export interface KbProcess {
  readonly child: ChildProcess;
  /** stdout and stderr so far. */
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code (or 128 + signal) when it has exited. */
  readonly exited: Promise<number>;
  /** Resolves when stderr matches `pattern`; rejects after `ms` or when the process exits first. */
  waitForStderr(pattern: RegExp, ms: number): Promise<RegExpMatchArray>;
  /** Sends `signal` to its whole process group (itself and what it started). */
  signalGroup(signal: NodeJS.Signals): void;
}

const SIGNAL_NUMBERS: Partial<Record<NodeJS.Signals, number>> = { SIGINT: 2, SIGKILL: 9, SIGTERM: 15 };

/** Every kb process the tests started, for {@link killAll}. */
const started: KbProcess[] = [];

/** Starts `node bin.js ...args` in its own process group with `env` added. */
export function startKb(args: readonly string[], env: NodeJS.ProcessEnv, cwd = repoRoot): KbProcess {
  const child = spawn(process.execPath, [kbBinJs, ...args], {
    cwd,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let stdout = "";
  let stderr = "";
  const listeners = new Set<() => void>();
  child.stdout?.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
    for (const listener of listeners) listener();
  });
  const exited = new Promise<number>((done) =>
    child.once("close", (code, signal) =>
      done(code ?? 128 + (signal === null ? 0 : (SIGNAL_NUMBERS[signal] ?? 0))),
    ),
  );
  let gone = false;
  void exited.then(() => {
    gone = true;
    for (const listener of listeners) listener();
  });
  const process_: KbProcess = {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    exited,
    waitForStderr: (pattern, ms) =>
      new Promise((done, fail) => {
        const check = () => {
          const match = stderr.match(pattern);
          if (match !== null) finish(() => done(match));
          else if (gone) finish(() => fail(new Error(`kb ${args[0]} exited before ${pattern}:\n${stderr}`)));
        };
        const timer = setTimeout(
          () => finish(() => fail(new Error(`no ${pattern} from kb ${args[0]} in ${ms} ms:\n${stderr}`))),
          ms,
        );
        const finish = (then: () => void) => {
          clearTimeout(timer);
          listeners.delete(check);
          then();
        };
        listeners.add(check);
        check();
      }),
    signalGroup: (signal) => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, signal);
      } catch {
        // The group is gone already.
      }
    },
  };
  started.push(process_);
  return process_;
}

/** Kills the process group of every kb process started (the exited ones' too: their children). */
export async function killAll(): Promise<void> {
  for (const each of started) each.signalGroup("SIGKILL");
  await Promise.all(started.map((each) => each.exited));
  started.length = 0;
}

/** Writes a sweep spec of the lines and returns its path. */
export function writeSpec(dir: string, lines: readonly string[]): string {
  const file = join(dir, "sweep.yaml");
  writeFileSync(file, `${lines.join("\n")}\n`);
  return file;
}

/** A row of results.jsonl. */
export interface Row {
  point: number;
  key: string;
  status: string;
  reason: string | null;
  digest: string | null;
  values: Record<string, unknown>;
  metrics: Record<string, unknown>;
}

/** The rows of `out`/results.jsonl in the order written. */
export function rowsOf(out: string): Row[] {
  return readFileSync(join(out, "results.jsonl"), "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as Row);
}
