import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { kb } from "./test-support.js";

// kb sweep and kb run on hostile and unlucky input, as a user runs them: the built kb in its own
// process (a spec that pollutes Object.prototype would pollute an in-process test too).

const root = fileURLToPath(new URL("../../../", import.meta.url));
const bin = join(root, "apps", "cli", "dist", "bin.js");
const scratch = mkdtempSync(join(tmpdir(), "kb-sweep-faults-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

interface Exit {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** The built `kb ...args` as a child process, in `cwd`. */
function kbProcess(args: readonly string[], cwd = scratch): Promise<Exit> {
  const child = spawn(process.execPath, [bin, ...args], { cwd, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, stdout, stderr })));
}

/** A folder with `spec.yaml` holding `lines`; returns the folder. */
function specFolder(lines: readonly string[]): string {
  const dir = mkdtempSync(join(scratch, "spec-"));
  writeFileSync(join(dir, "spec.yaml"), `${lines.join("\n")}\n`);
  return dir;
}

describe.skipIf(!existsSync(bin))("fault: data runs no code", () => {
  it("refuses a spec whose set: path goes through __proto__ (it ran its JavaScript in every point)", async () => {
    const dir = specFolder([]);
    const marker = join(dir, "PWNED");
    const script = `import{writeFileSync}from"node:fs";writeFileSync(${JSON.stringify(marker)},"x")`;
    writeFileSync(
      join(dir, "spec.yaml"),
      [
        "name: pwn",
        "bench: vector-add",
        "set:",
        `  topology.__proto__.NODE_OPTIONS: '--import=data:text/javascript,${script}'`,
        "axes:",
        "  n: { path: params.n, values: [1024] }",
        "",
      ].join("\n"),
    );
    const run = await kbProcess(["sweep", join(dir, "spec.yaml"), "--out", join(dir, "out")]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      `${join(dir, "spec.yaml")}:4:3: set.topology.__proto__.NODE_OPTIONS: "__proto__" cannot be a key`,
    );
    expect(run.stderr).not.toMatch(/internal error|\n\s+at /);
    expect(existsSync(marker)).toBe(false);
    expect(existsSync(join(dir, "out"))).toBe(false);
  });

  it("refuses a --param named __proto__ or constructor, naming the option", async () => {
    mkdirSync(join(scratch, "run"), { recursive: true });
    const run = await kbProcess(["run", "vector-add", "--param", "constructor=1"], join(scratch, "run"));
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`option '--param <key=value>' argument 'constructor=1' is invalid`);
    expect(run.stderr).toContain('"constructor" cannot be a key');
  });
});

describe("fault: designs too large to plan", () => {
  const axes = (count: number, max: number) =>
    Array.from(
      { length: count },
      (_, index) => `  a${index}: { path: params.a${index}, range: { min: 1, max: ${max}, step: 1 } }`,
    );

  it("refuses a 10^15-point grid at once, --dry-run or not, saying how many, the limit and how to narrow it", async () => {
    const spec = join(
      specFolder(["name: huge", "bench: vector-add", "axes:", ...axes(5, 1000)]),
      "spec.yaml",
    );
    for (const extra of [["--dry-run"], []]) {
      const run = await kb("sweep", spec, ...extra);
      expect(run.code).toBe(1);
      expect(run.stderr).toBe(
        `[SWEEP_INVALID] ${spec}:4:3: design: the grid has 1,000,000,000,000,000 points (a0 1,000 x a1 1,000 x a2 1,000 x a3 1,000 x a4 1,000), more than the 100,000 a sweep plans and runs; give the axes fewer values (a larger range.step), or sample the space with design: { kind: lhs, points: N }.\n`,
      );
    }
  });

  it("counts a large design with --dry-run instead of listing (and planning) every point", async () => {
    const spec = join(
      specFolder(["name: large", "bench: vector-add", "axes:", ...axes(2, 300)]),
      "spec.yaml",
    );
    const run = await kb("sweep", spec, "--dry-run");
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(
      "large: 90,000 points in the design (grid: a0 300 x a1 300); not listed: --dry-run lists designs of up to 1,000 points. Constraints and duplicates are applied when the sweep runs.\n",
    );
  });

  it("bounds --jobs", async () => {
    const spec = join(specFolder(["name: j", "bench: vector-add", "axes:", ...axes(1, 2)]), "spec.yaml");
    const run = await kb("sweep", spec, "--jobs", "1000000000");
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("expected a whole number from 1 to 1024 (points at once on this machine)");
  });
});

describe.skipIf(!existsSync(bin))("fault: the results folder", () => {
  const spec = () =>
    join(
      specFolder([
        "name: out",
        "bench: vector-add",
        "axes:",
        "  n: { path: params.n, values: [1024, 2048] }",
      ]),
      "spec.yaml",
    );

  it("refuses a second kb sweep on one --out, naming the holder's pid, and leaves its lock alone", async () => {
    const out = join(scratch, "held");
    mkdirSync(out);
    const lock = join(out, ".kb-sweep.lock");
    writeFileSync(lock, `${JSON.stringify({ pid: process.pid, host: hostname() })}\n`);
    const run = await kbProcess(["sweep", spec(), "--out", out]);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      `[SWEEP_OUTPUT] ${lock}: another kb sweep (pid ${process.pid} on ${hostname()}) is writing to ${out}: wait for it to end, or give this sweep another --out. If no such sweep runs, remove ${lock}.\n`,
    );
    expect(existsSync(lock)).toBe(true);
    expect(existsSync(join(out, "results.jsonl"))).toBe(false);
  });

  it("stops with an output error when a point's files cannot be written, recording no point as failed", async () => {
    const out = join(scratch, "unwritable");
    mkdirSync(out);
    // Where the points' topology files go, a file: every write there fails.
    writeFileSync(join(out, "topologies"), "");
    const run = await kbProcess(["sweep", spec(), "--out", out, "--jobs", "1"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      new RegExp(`\\[SWEEP_OUTPUT\\] ${join(out, "topologies")}/[0-9a-f]{16}\\.yaml: cannot write`),
    );
    expect(run.stderr).not.toMatch(/FAILED|internal error|\n\s+at /);
    expect(readFileSync(join(out, "results.jsonl"), "utf8")).toBe("");
    expect(existsSync(join(out, ".kb-sweep.lock"))).toBe(false);
  });
});
