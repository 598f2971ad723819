import { spawn } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

// The root `kb` (and bench:*) scripts run scripts/build-then.mjs: the build's output is shown only
// when it fails, so `npx -y pnpm@10 -s kb run gemm --json > r.json` writes kb's JSON alone. The
// build here is a stand-in turbo (BUILD_THEN_TURBO): the real one needs pnpm on PATH and rebuilds.

const root = fileURLToPath(new URL("../../../", import.meta.url));
const script = join(root, "scripts", "build-then.mjs");
const bin = join(root, "apps", "cli", "dist", "bin.js");
const scratch = mkdtempSync(join(tmpdir(), "kb-build-then-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A stand-in turbo that prints turbo's banner on stdout and stderr, notes its args, exits `code`. */
function fakeTurbo(code: number): { path: string; args: string } {
  const path = join(scratch, `turbo-${code}`);
  const args = join(scratch, `turbo-${code}.args`);
  writeFileSync(
    path,
    `#!${process.execPath}\n` +
      `require("node:fs").writeFileSync(${JSON.stringify(args)}, JSON.stringify(process.argv.slice(2)));\n` +
      `console.log("   • turbo 2.11.11\\n   • Packages in scope: @kb/cli");\n` +
      `console.error("Tasks: 1 successful, 1 total");\n` +
      `process.exit(${code});\n`,
  );
  chmodSync(path, 0o755);
  return { path, args };
}

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(
  turbo: string,
  args: string[],
  onStdout?: (text: string, kill: () => void) => void,
): Promise<Ran> {
  const child = spawn(process.execPath, [script, ...args], {
    cwd: root,
    env: { ...process.env, BUILD_THEN_TURBO: turbo },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
    onStdout?.(stdout, () => child.kill("SIGTERM"));
  });
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.on("exit", (code) => resolve({ code, stdout, stderr })));
}

describe("scripts/build-then.mjs", () => {
  it("after a quiet build, stdout is exactly kb's output: kb run --json parses", async () => {
    const turbo = fakeTurbo(0);
    const ran = await run(turbo.path, ["@kb/cli...", bin, "run", "gemm", "--param", "M=64", "--json"]);
    expect(ran.stderr).toBe("");
    expect(ran.code).toBe(0);
    expect(JSON.parse(ran.stdout).bench).toBe("gemm");
    expect(JSON.parse(readFileSync(turbo.args, "utf8"))).toEqual([
      "run",
      "build",
      "--filter=@kb/cli...",
      "--output-logs=errors-only",
    ]);
  }, 60_000);

  it("a failed build prints its output on stderr, runs nothing and exits with its code", async () => {
    const ran = await run(fakeTurbo(3).path, ["@kb/cli...", bin, "run", "gemm", "--json"]);
    expect(ran.code).toBe(3);
    expect(ran.stdout).toBe("");
    expect(ran.stderr).toContain("• turbo 2.11.11");
    expect(ran.stderr).toContain("Tasks: 1 successful, 1 total");
    expect(ran.stderr).toContain("build-then: the build of @kb/cli... failed; nothing was run.");
  });

  it("exits with the program's code and passes node flags and arguments through", async () => {
    const program =
      "if (typeof gc !== 'function') process.exit(9); console.log(process.argv.slice(1).join(' ')); process.exit(7)";
    const ran = await run(fakeTurbo(0).path, ["@kb/benches...", "--expose-gc", "-e", program, "a", "--json"]);
    expect(ran.code).toBe(7);
    expect(ran.stdout).toBe("a --json\n");
  });

  it("passes SIGTERM on to the program, which decides how to end", async () => {
    const program =
      "process.on('SIGTERM', () => { console.log('stopping'); process.exit(143); }); console.log('ready'); setInterval(() => {}, 1000)";
    const ran = await run(fakeTurbo(0).path, ["@kb/cli...", "-e", program], (text, kill) => {
      if (text === "ready\n") kill();
    });
    expect(ran.stdout).toBe("ready\nstopping\n");
    expect(ran.code).toBe(143);
  });
});
