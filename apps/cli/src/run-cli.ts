import { readFileSync } from "node:fs";
import { isKbError } from "@kb/errors";
import { formatIssue } from "@kb/topology";
import { Command, CommanderError } from "commander";
import { addCheckCommand } from "./check-command.js";
import { addComponentsCommand } from "./components-command.js";
import { addInitCommand } from "./init-command.js";
import { locatedIssuesOf } from "./located-issues.js";
import { addProbeCommand } from "./probe-command.js";
import { addRunCommand } from "./run-command.js";
import { addSweepCommand } from "./sweep-command.js";
import { addTopologyCommand } from "./topology-command.js";
import { addWebCommand } from "./web-command.js";
import { addWorkerCommand } from "./worker-command.js";

/** A stream the CLI writes to: `process.stdout`, or a collector in tests. */
export interface CliOutput {
  write(text: string): unknown;
  /** Terminal width; help text wraps to it. Absent on a pipe (help then wraps at 80). */
  readonly columns?: number | undefined;
  /** True on a terminal; help text wraps to `columns` only then. */
  readonly isTTY?: boolean | undefined;
}

/** Where `runCli` prints. */
export interface CliIo {
  readonly stdout: CliOutput;
  readonly stderr: CliOutput;
}

/** Exit codes of `kb`: 0 success, 1 user error (bad input, usage), 2 internal error (a bug). */
export const EXIT_OK = 0;
/** Bad input file, invalid topology, usage error. */
export const EXIT_USER_ERROR = 1;
/** An unexpected exception: a bug in kb. */
export const EXIT_INTERNAL_ERROR = 2;

/**
 * Runs the `kb` command line on `argv` (the arguments after the program name) and returns the exit
 * code. Everything is printed through `io`; the process is never exited, so tests and embedding
 * tools can call it repeatedly (each call builds a fresh command tree: no state between calls).
 *
 * Errors: a `KbError` prints its message (no stack) and returns 1; a usage error prints
 * commander's message plus where to find help and returns 1; anything else is a bug: its stack is
 * printed with a request to report it, and 2 is returned. Never throws.
 */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const state = { exitCode: EXIT_OK };
  const program = buildProgram(io, state);
  try {
    await program.parseAsync([...argv], { from: "user" });
    return state.exitCode;
  } catch (error) {
    return reportError(error, io);
  }
}

/** What a command's action can set: the exit code of a run that printed its own failures. */
export interface RunState {
  exitCode: number;
}

function buildProgram(io: CliIo, state: RunState): Command {
  const program = new Command("kb");
  // Set before the subcommands are added: commander copies these settings into each of them.
  program
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
      getOutHelpWidth: () => helpWidth(io.stdout),
      getErrHelpWidth: () => helpWidth(io.stderr),
      getOutHasColors: () => false,
      getErrHasColors: () => false,
    })
    .description("kernbench-ts: an event-driven performance simulator for an HBM-centric AI accelerator.")
    .addHelpText(
      "after",
      "\nExit codes: 0 success, 1 bad input or usage error, 2 internal error (a bug: please report it).",
    )
    .version(packageVersion(), "-V, --version", "print the version of kb")
    .helpOption("-h, --help", "show help for this command")
    .showSuggestionAfterError(true);
  addTopologyCommand(program, io, state);
  addComponentsCommand(program, io);
  addRunCommand(program, io, state);
  addCheckCommand(program, io, state);
  addProbeCommand(program, io, state);
  addSweepCommand(program, io, state);
  addWorkerCommand(program, io, state);
  addWebCommand(program, io);
  addInitCommand(program, io);
  for (const command of allCommands(program)) {
    command.showHelpAfterError(`(see ${commandPath(command)} --help)`);
  }
  return program;
}

function reportError(error: unknown, io: CliIo): number {
  if (error instanceof CommanderError) {
    // Help and --version arrive here too, as "errors" with exit code 0; commander has printed the
    // message of a real usage error already (with the help hint), or the help for a bare `kb`.
    return error.exitCode === 0 ? EXIT_OK : EXIT_USER_ERROR;
  }
  const issues = locatedIssuesOf(error);
  if (issues !== undefined) {
    io.stderr.write(`${issues.map(formatIssue).join("\n")}\n`);
    return EXIT_USER_ERROR;
  }
  if (isKbError(error)) {
    io.stderr.write(`${error.message}\n`);
    return EXIT_USER_ERROR;
  }
  const stack = error instanceof Error ? (error.stack ?? `${error.name}: ${error.message}`) : String(error);
  io.stderr.write(
    `internal error: ${stack}\n` +
      "This is a bug in kb, not in your input. Please report it with the command you ran and the files it read.\n",
  );
  return EXIT_INTERNAL_ERROR;
}

function helpWidth(output: CliOutput): number {
  return output.isTTY === true && output.columns !== undefined ? output.columns : 80;
}

function allCommands(command: Command): Command[] {
  return [command, ...command.commands.flatMap((child) => allCommands(child as Command))];
}

function commandPath(command: Command): string {
  const names: string[] = [];
  for (let current: Command | null = command; current !== null; current = current.parent) {
    names.unshift(current.name());
  }
  return names.join(" ");
}

function packageVersion(): string {
  // src/ and dist/ both sit next to package.json.
  const json = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
    version: string;
  };
  return json.version;
}
