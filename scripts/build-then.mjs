#!/usr/bin/env node
// Builds a part of the workspace quietly, then runs a built program, for the root package.json
// scripts (`kb`, `bench:*`, `fuzz:tl`):
//
//   node scripts/build-then.mjs <turbo filter> <node args...>
//   node scripts/build-then.mjs @kb/cli... apps/cli/dist/bin.js run gemm --json
//
// The build (`turbo run build --filter=<filter>`) runs with its output captured: on success
// nothing of it is printed, so stdout carries only the program's own output (`kb run --json >
// r.json` is JSON); on failure its output goes to stderr and this exits with the build's code.
// The program then runs with Node and the given arguments (node flags such as --expose-gc first),
// its stdio inherited, and this exits with its code. SIGINT and SIGTERM sent to this process are
// passed on to the program, which decides how to end (kb removes its temporary files and exits
// 130 / 143).

import { spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const [filter, ...nodeArgs] = process.argv.slice(2);
if (filter === undefined || nodeArgs.length === 0) {
  process.stderr.write("usage: node scripts/build-then.mjs <turbo filter> <node args...>\n");
  process.exit(2);
}

// BUILD_THEN_TURBO: another turbo executable (the tests give a stand-in).
const local = join(root, "node_modules", ".bin", process.platform === "win32" ? "turbo.cmd" : "turbo");
// biome-ignore lint/suspicious/noUndeclaredEnvVars: read by this script, not by a turbo task.
const turbo = process.env.BUILD_THEN_TURBO ?? (existsSync(local) ? local : "turbo");
const build = spawnSync(turbo, ["run", "build", `--filter=${filter}`, "--output-logs=errors-only"], {
  cwd: root,
  encoding: "utf8",
  maxBuffer: 64 * 2 ** 20,
  shell: process.platform === "win32",
  stdio: ["ignore", "pipe", "pipe"],
});
if (build.error !== undefined || build.status !== 0) {
  process.stderr.write(build.stdout ?? "");
  process.stderr.write(build.stderr ?? "");
  if (build.error !== undefined)
    process.stderr.write(`build-then: could not run turbo: ${build.error.message}\n`);
  process.stderr.write(`build-then: the build of ${filter} failed; nothing was run.\n`);
  process.exit(build.status ?? 1);
}

const child = spawn(process.execPath, nodeArgs, { stdio: "inherit" });
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => child.kill(signal));
}
child.on("exit", (code, signal) => {
  process.exitCode = code ?? (signal === "SIGINT" ? 130 : signal === "SIGTERM" ? 143 : 1);
});
