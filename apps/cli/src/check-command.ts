import { relative } from "node:path";
import { KbError } from "@kb/errors";
import { type BenchDiagnostic, checkBench } from "@kb/runtime/node";
import type { Command } from "commander";
import { BENCH_MODULES_FROM, locateBench } from "./bench-files.js";
import type { CliIo, CliOutput, RunState } from "./run-cli.js";

/** Adds `kb check BENCH...` to the program. */
export function addCheckCommand(program: Command, io: CliIo, state: RunState): Command {
  return program
    .command("check")
    .summary("type-check bench files with the @kb types")
    .description(
      "Type-check bench files and the files they import with the types of the @kb packages (strict " +
        "TypeScript, as the playground's editor checks them), without running anything. Prints each " +
        "error as FILE:LINE:COL: error TSnnnn: message (paths from the current directory) and exits 1 " +
        "if there is one; prints one ok line and exits 0 otherwise. BENCH is a name (benches/NAME.ts, " +
        "looked up as kb run does) or the path of a bench file. kb run --typecheck runs the same check " +
        "before a run.",
    )
    .argument("<bench...>", "bench names (benches/NAME.ts) or paths of bench files")
    .addHelpText(
      "after",
      "\nExamples:\n" +
        "  kb check ./my-bench.ts\n" +
        "  kb check gemm softmax examples/triton-tutorials/03-matmul.ts\n" +
        "  kb run ./my-bench.ts --typecheck --verify   # check, then run",
    )
    .action(async (benchArgs: string[]) => {
      const cwd = process.cwd();
      const files = [...new Set(benchArgs.map((benchArg) => locateBench(benchArg, cwd)))];
      const { errors, checked } = await typeCheckBenches(files, io.stdout, cwd);
      if (errors > 0) {
        io.stderr.write(`kb check: ${count(errors, "error")}; fix them and check again.\n`);
        state.exitCode = 1;
        return;
      }
      const imported = checked - files.length;
      const what =
        files.length === 1
          ? `${relative(cwd, files[0] as string)} and the ${count(imported, "file")} it imports`
          : `${count(files.length, "bench")} and the ${count(imported, "file")} they import`;
      io.stdout.write(`ok: ${what} type-check clean\n`);
    });
}

/**
 * Type-checks bench files (`checkBench` of @kb/runtime/node, with kb's packages resolved where
 * `kb run` gets them), printing each problem to `out` as `file:line:col: error TSnnnn: message`.
 * Returns the number of errors and of files checked.
 */
export async function typeCheckBenches(
  files: readonly string[],
  out: CliOutput,
  cwd: string,
): Promise<{ errors: number; checked: number }> {
  const result = await checkBench(files, { resolveFrom: BENCH_MODULES_FROM });
  for (const diagnostic of result.diagnostics) out.write(`${formatDiagnostic(diagnostic, cwd)}\n`);
  return {
    errors: result.diagnostics.filter((diagnostic) => diagnostic.category === "error").length,
    checked: result.files.length,
  };
}

/**
 * `kb run --typecheck`: the check of `kb check` before a run, its errors on stderr (stdout may
 * carry --json). Throws `RUNTIME_INVALID` when there is an error: nothing is run.
 */
export async function typeCheckBeforeRun(file: string, io: CliIo, cwd: string): Promise<void> {
  const { errors } = await typeCheckBenches([file], io.stderr, cwd);
  if (errors > 0) {
    throw new KbError(
      "RUNTIME_INVALID",
      `kb run --typecheck: ${count(errors, "type error")} in ${relative(cwd, file)} and the files it imports (above); nothing was run. Fix them, or run without --typecheck.`,
    );
  }
}

/** `benches/x.ts:8:22: error TS2551: Property 'lod' does not exist...`, the path from `cwd`. */
export function formatDiagnostic(diagnostic: BenchDiagnostic, cwd: string): string {
  const where =
    diagnostic.file === undefined
      ? ""
      : `${relative(cwd, diagnostic.file)}:${diagnostic.line}:${diagnostic.col}: `;
  const message = diagnostic.message.replaceAll("\n", "\n  ");
  return `${where}${diagnostic.category} TS${diagnostic.code}: ${message}`;
}

function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : noun.endsWith("h") ? "es" : "s"}`;
}
