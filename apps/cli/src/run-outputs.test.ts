import { spawn } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { runKb } from "./test-support.js";

// kb run's outputs (all or nothing, checked before the run), its limits, and its signals.

const fixture = (name: string) => fileURLToPath(new URL(`__fixtures__/${name}`, import.meta.url));
const defaultYaml = fileURLToPath(new URL("../../../topologies/default.yaml", import.meta.url));
const bin = fileURLToPath(new URL("../dist/bin.js", import.meta.url));
const copyBench = fixture("copy-bench.ts");
const spinBench = fixture("spin-bench.ts");

const run = (...argv: string[]) => runKb(["run", ...argv]);

const scratch = mkdtempSync(join(tmpdir(), "kb-cli-outputs-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("kb run: outputs are checked before the run", () => {
  it("refuses a directory as --trace, naming it, and writes nothing", async () => {
    const dir = mkdtempSync(join(scratch, "dir-"));
    const failed = await run(copyBench, "--trace", dir);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain(`--trace ${dir} is a directory; name a file in it`);
    expect(readdirSync(dir)).toEqual([]);
  });

  it("refuses the same file for --trace and --oplog", async () => {
    const dir = mkdtempSync(join(scratch, "same-"));
    const file = join(dir, "x.json");
    const failed = await run(copyBench, "--trace", file, "--oplog", file);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain(`--oplog ${file} is also the file of --trace`);
    expect(readdirSync(dir)).toEqual([]);
  });

  it("refuses to write the trace over the topology it reads, which is left as it was", async () => {
    const dir = mkdtempSync(join(scratch, "input-"));
    const topology = join(dir, "t.yaml");
    copyFileSync(defaultYaml, topology);
    const before = readFileSync(topology, "utf8");
    const failed = await run(copyBench, "--topology", topology, "--trace", topology);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain(`--trace ${topology} is an input of this run`);
    expect(readFileSync(topology, "utf8")).toBe(before);
    expect(readdirSync(dir)).toEqual(["t.yaml"]);
  });

  it("writes both outputs of a run that succeeded, and no temporary file", async () => {
    const dir = mkdtempSync(join(scratch, "both-"));
    const done = await run(
      copyBench,
      "--trace",
      join(dir, "t.json"),
      "--oplog",
      join(dir, "o.jsonl"),
      "--json",
    );
    expect(done.code).toBe(0);
    expect(readdirSync(dir).sort()).toEqual(["o.jsonl", "t.json"]);
  });
});

describe("kb run: limits", () => {
  it("--max-events stops a kernel that never ends, naming its PE, its tl call and the limit", async () => {
    const dir = mkdtempSync(join(scratch, "limit-"));
    const stopped = await run(spinBench, "--max-events", "300000", "--trace", join(dir, "t.json"));
    expect(stopped.code).toBe(1);
    expect(stopped.stderr).toMatch(
      /^\[RUN_LIMIT\] at t=[\d.]+ ns: the run reached its limit of 300,000 DES events \(--max-events\) after 300,000 events/,
    );
    expect(stopped.stderr).toMatch(
      /1 kernel\(s\) still running:\n {2}sip0\.cube0\.pe0: kernel spin, tl\.cycles at .*spin-bench\.ts:7:\d+ \(since t=[\d.]+ ns\)/,
    );
    expect(stopped.stderr).toContain("raise the limit (--max-events)");
    expect(readdirSync(dir)).toEqual([]);
  });

  it("--max-sim-time stops it at that simulated time", async () => {
    const stopped = await run(spinBench, "--max-sim-time", "5000");
    expect(stopped.code).toBe(1);
    expect(stopped.stderr).toMatch(
      /^\[RUN_LIMIT\] at t=(4\d\d\d|5000)(\.\d+)? ns: the run reached its limit of 5000 ns of simulated time \(--max-sim-time\)/,
    );
  });

  it("refuses a limit that is not a number > 0", async () => {
    const bad = await run(copyBench, "--max-events", "-3");
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('--max-events needs a number > 0, such as 1e9; got "-3"');
  });

  it("limits that are not reached change nothing: same results as without them", async () => {
    const plain = await run(copyBench, "--json");
    const limited = await run(
      copyBench,
      "--json",
      "--max-events",
      "1e7",
      "--max-sim-time",
      "1e12",
      "--timeout",
      "600",
    );
    expect(limited.code).toBe(0);
    expect(limited.stdout).toBe(plain.stdout);
  });
});

describe("kb run: signals", () => {
  /** Starts `kb run spin --trace TRACE` in a child, sends `signal` once its temporary file exists. */
  async function interrupt(
    signal: "SIGINT" | "SIGTERM",
    trace = "t.json",
  ): Promise<{ code: number | null; stderr: string; files: string[] }> {
    const dir = mkdtempSync(join(scratch, `${signal}-`));
    mkdirSync(join(dir, "out"));
    const child = spawn(
      process.execPath,
      [bin, "run", spinBench, "--trace", join(dir, "out", trace), "--oplog", join(dir, "out", "o.jsonl")],
      {
        stdio: ["ignore", "ignore", "pipe"],
      },
    );
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    try {
      // The temporary files exist once the outputs are opened, before the run starts.
      for (let tries = 0; readdirSync(join(dir, "out")).length === 0; tries++) {
        if (tries > 600) throw new Error(`kb run created no temporary file in 60 s: ${stderr}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      await new Promise((resolve) => setTimeout(resolve, 300)); // well into the endless run
      child.kill(signal);
      const code = await exited;
      return { code, stderr, files: readdirSync(join(dir, "out")) };
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    }
  }

  it("SIGINT removes the temporary files and exits 130", async () => {
    const { code, stderr, files } = await interrupt("SIGINT");
    expect(code).toBe(130);
    expect(stderr).toContain("kb run: interrupted (SIGINT); no output file was written.");
    expect(files).toEqual([]);
  }, 60_000);

  it("SIGTERM removes the temporary files (a gzip trace's too) and exits 143", async () => {
    const { code, files } = await interrupt("SIGTERM", "t.json.gz");
    expect(code).toBe(143);
    expect(files).toEqual([]);
  }, 60_000);
});
