import { type CliOutput, runCli } from "./run-cli.js";

/** What one `kb` invocation printed and returned. */
export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs `kb argv` in-process with collecting streams (the tests' `kb`); `stderr` may pretend to
 * be a terminal (`{ isTTY: true, columns: 80 }`).
 */
export async function runKb(argv: readonly string[], stderrTty: Partial<CliOutput> = {}): Promise<Run> {
  let stdout = "";
  let stderr = "";
  const code = await runCli(argv, {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { ...stderrTty, write: (text: string) => (stderr += text) },
  });
  return { code, stdout, stderr };
}

/** `kb ...argv`. */
export const kb = (...argv: string[]): Promise<Run> => runKb(argv);
