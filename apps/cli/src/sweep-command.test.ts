import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { withoutFloatNoise } from "@kb/errors";
import { afterAll, describe, expect, it } from "vitest";
import { kb, runKb } from "./test-support.js";

// kb sweep end to end: every point is a `kb run --json` in its own process (the built kb, as an
// installed kb runs them), rows appended as points finish, and an interrupted sweep resumed
// without running a finished point again.

const root = fileURLToPath(new URL("../../../", import.meta.url));
const bin = join(root, "apps", "cli", "dist", "bin.js");
const scratch = mkdtempSync(join(tmpdir(), "kb-sweep-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A 3 x 2 grid of vector-add sizes and NOC widths (6 points of about half a second each). */
function writeSpec(dir: string): string {
  const file = join(dir, "sweep.yaml");
  writeFileSync(
    file,
    [
      "name: vadd",
      `bench: ${join(root, "benches", "vector-add.ts")}`,
      `topology: ${join(root, "topologies", "default.yaml")}`,
      "params: { chunk: 4096 }",
      "axes:",
      "  n: { path: params.n, values: [262144, 524288, 1048576] }",
      "  cols: { path: topology.cube.noc.cols, values: [2, 4] }",
      "metrics:",
      "  time: simTimeNs",
      "  events: events",
      "  hbm: work.hbmBytes",
      "",
    ].join("\n"),
  );
  return file;
}

interface Row {
  point: number;
  key: string;
  status: string;
  digest: string | null;
  values: { n: number; cols: number };
  metrics: Record<string, unknown>;
}

const rowsOf = (out: string): Row[] =>
  readFileSync(join(out, "results.jsonl"), "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as Row);

/** `kb sweep` as a child process; `onStderr` may kill it. */
function sweepProcess(
  args: string[],
  onStderr: (text: string, kill: () => void) => void = () => {},
): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [bin, "sweep", ...args], { stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  let killed = false;
  // One signal: a second one while kb sweep stops would end it the default way.
  const kill = () => {
    if (!killed) child.kill("SIGTERM");
    killed = true;
  };
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
    onStderr(stderr, kill);
  });
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, stderr })));
}

describe.skipIf(!existsSync(bin))("kb sweep", () => {
  it("prints the points of a design with --dry-run", async () => {
    const dir = mkdtempSync(join(scratch, "dry-"));
    const run = await kb("sweep", writeSpec(dir), "--dry-run");
    expect(run.stderr).toBe("");
    expect(run.stdout.split("\n").slice(0, 3)).toEqual([
      "point 0: n=262144 cols=2",
      "point 1: n=262144 cols=4",
      "point 2: n=524288 cols=2",
    ]);
    expect(run.stdout).toContain("6 points to run, 0 skipped by constraints, 0 duplicates dropped");
  });

  it("on a terminal, estimates the time left after each point but the last", async () => {
    const dir = mkdtempSync(join(scratch, "tty-"));
    const spec = join(dir, "sweep.yaml");
    writeFileSync(
      spec,
      readFileSync(writeSpec(dir), "utf8")
        .replace("[262144, 524288, 1048576]", "[65536, 131072]")
        .replace("values: [2, 4]", "values: [2]"),
    );
    const run = await runKb(["sweep", spec, "--jobs", "1", "--out", join(dir, "out")], {
      isTTY: true,
      columns: 120,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/^\[1\/2\] point 0 ok: n=65536 cols=2, ETA \d+(\.\d+)? m?s$/m);
    expect(run.stderr).toMatch(/^\[2\/2\] point 1 ok: n=131072 cols=2$/m);
  }, 60_000);

  it("resumes an interrupted sweep without running a point twice, with kb run's results", async () => {
    const dir = mkdtempSync(join(scratch, "resume-"));
    const spec = writeSpec(dir);
    const out = join(dir, "out");
    // Interrupted once two rows are written (two points at a time: others are running then).
    const first = await sweepProcess([spec, "--jobs", "2", "--out", out], (stderr, kill) => {
      if (stderr.includes("[2/6]")) kill();
    });
    expect(first.code).toBe(143);
    expect(first.stderr).toMatch(
      /interrupted \(SIGTERM\); \d of 6 points are in .*Run the same command again to resume/,
    );
    // On a pipe: a log line per point, no wall time (the estimate is for a terminal).
    expect(first.stderr).toMatch(/^\[1\/6\] point \d ok: n=\d+ cols=\d$/m);
    expect(first.stderr).not.toContain("ETA");
    const before = rowsOf(out);
    expect(before.length).toBeGreaterThanOrEqual(2);
    expect(before.length).toBeLessThan(6);

    const second = await kb("sweep", spec, "--jobs", "2", "--out", out);
    expect(second.code).toBe(0);
    expect(second.stderr).toContain(
      `6 points (${before.length} already in the table), ${6 - before.length} to run`,
    );
    const rows = rowsOf(out);
    expect(rows.slice(0, before.length)).toEqual(before);
    expect(rows.map((row) => row.point).sort()).toEqual([0, 1, 2, 3, 4, 5]);
    expect(new Set(rows.map((row) => row.key)).size).toBe(6);
    expect(rows.every((row) => row.status === "ok")).toBe(true);

    // The CSV holds the same rows: a header, then one line per point.
    const csv = readFileSync(join(out, "results.csv"), "utf8").trim().split("\n");
    expect(csv[0]).toBe("point,status,n,cols,time,events,hbm,digest,key,reason");
    expect(csv).toHaveLength(7);

    // Each row's metrics are those of kb run --json on the same point (without the float noise
    // of sums: 12 significant digits, as the table keeps them).
    for (const row of rows.filter((each) => each.point === 0 || each.point === 5)) {
      const topology = join(out, "topologies", `${row.key.slice(0, 16)}.yaml`);
      const direct = await kb(
        "run",
        join(root, "benches", "vector-add.ts"),
        "--topology",
        topology,
        "--param",
        "chunk=4096",
        "--param",
        `n=${row.values.n}`,
        "--json",
      );
      const results = JSON.parse(direct.stdout) as {
        simTimeNs: number;
        events: number;
        work: { hbmBytes: number };
        manifest: { digest: string };
      };
      expect(row.metrics).toEqual({
        time: withoutFloatNoise(results.simTimeNs),
        events: results.events,
        hbm: results.work.hbmBytes,
      });
      expect(row.digest).toBe(results.manifest.digest);
    }

    // A third run finds every point done and runs none.
    const third = await kb("sweep", spec, "--out", out);
    expect(third.stdout).toContain("6 points (6 from an earlier run, 0 run now): 6 ok, 0 failed");
    expect(rowsOf(out)).toEqual(rows);
  }, 120_000);

  it("records an out-of-memory, a crashed and a timed-out point as failed, and the others ok", async () => {
    const dir = mkdtempSync(join(scratch, "crash-"));
    const spec = join(dir, "sweep.yaml");
    writeFileSync(
      spec,
      [
        "name: crashes",
        `bench: ${fileURLToPath(new URL("__fixtures__/misbehaving-bench.ts", import.meta.url))}`,
        `topology: ${join(root, "topologies", "default.yaml")}`,
        "axes:",
        "  mode: { path: params.mode, values: [ok, oom, abort, hang] }",
        // The ok point must finish inside timeoutS on a loaded machine too; the hang never does.
        "run: { memoryMb: 64, timeoutS: 20 }",
        "",
      ].join("\n"),
    );
    const out = join(dir, "out");
    const run = await kb("sweep", spec, "--out", out, "--jobs", "2");
    expect(run.code).toBe(0);
    const rows = rowsOf(out).sort((a, b) => a.point - b.point) as unknown as {
      status: string;
      reason: string | null;
    }[];
    expect(rows.map((row) => [row.status, row.reason?.split(":")[0] ?? null])).toEqual([
      ["ok", null],
      ["failed", "out of memory (heap limit 64 MB; raise run.memoryMb)"],
      ["failed", "crashed"],
      ["failed", "timed out after 20 s (killed)"],
    ]);
    expect(rows[2]?.reason).toMatch(/^crashed: killed by SIGABRT/);
    expect(run.stdout).toContain("4 points (0 from an earlier run, 4 run now): 1 ok, 3 failed");
  }, 60_000);

  it("records a point that fails as failed, with its reason, and goes on", async () => {
    const dir = mkdtempSync(join(scratch, "fail-"));
    const spec = join(dir, "sweep.yaml");
    writeFileSync(
      spec,
      [
        "name: fails",
        `bench: ${join(root, "benches", "vector-add.ts")}`,
        `topology: ${join(root, "topologies", "default.yaml")}`,
        "axes:",
        // -1 is not a valid n: kb run refuses it (exit 1); 1024 runs.
        "  n: { path: params.n, values: [-1, 1024] }",
        "",
      ].join("\n"),
    );
    const out = join(dir, "out");
    const run = await kb("sweep", spec, "--out", out, "--jobs", "2");
    expect(run.code).toBe(0);
    const rows = rowsOf(out).sort((a, b) => a.point - b.point);
    expect(rows.map((row) => row.status)).toEqual(["failed", "ok"]);
    expect((rows[0] as unknown as { reason: string }).reason).toMatch(
      /^exit code 1: \[RUNTIME_INVALID\] bench "vector-add": bad params:\n {2}n: /,
    );
    expect(rows[0]?.metrics).toEqual({ simTimeNs: null });
    expect(typeof rows[1]?.metrics.simTimeNs).toBe("number");
    expect(run.stdout).toContain("2 points (0 from an earlier run, 2 run now): 1 ok, 1 failed");
  }, 60_000);

  it("gives each point the spec's run.maxStallCalls (kb run --max-stall-calls)", async () => {
    const dir = mkdtempSync(join(scratch, "stall-"));
    const spec = join(dir, "sweep.yaml");
    writeFileSync(
      spec,
      [
        "name: stalls",
        `bench: ${join(root, "apps", "cli", "src", "__fixtures__", "zero-time-spin-bench.ts")}`,
        `topology: ${join(root, "topologies", "default.yaml")}`,
        "run: { maxStallCalls: 2000 }",
        "axes:",
        "  cols: { path: topology.cube.noc.cols, values: [2] }",
        "",
      ].join("\n"),
    );
    const out = join(dir, "out");
    const run = await kb("sweep", spec, "--out", out, "--jobs", "1");
    expect(run.code).toBe(0);
    const [row] = rowsOf(out) as unknown as { status: string; reason: string }[];
    expect(row?.status).toBe("failed");
    // The spin stops after the spec's 2,000 calls, not kb run's default budget.
    expect(row?.reason).toContain("[RUN_LIMIT]");
    expect(row?.reason).toContain("2,000 tl calls in a row left the machine without progress");
  }, 60_000);
});
