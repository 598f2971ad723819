import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "@kb/tooling/node/free-port";
import { type RunningRedis, redisSkipReason, runRedisTests, startRedis } from "@kb/tooling/node/redis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { kb } from "./cli-sources.js";
import { kbBinJs, killAll, repoRoot, rowsOf, startKb, writeSpec } from "./sweep-redis-support.js";

// kb sweep --redis with kb worker processes on a real redis-server (127.0.0.1, a free port, a temp
// folder, a password): a 12-point sweep on two workers, one SIGKILLed while it holds a point,
// gives every row once with the local executor's results; a worker with another bench refuses
// (and, with --idle-exit, ends by itself after the sweep); a wrong password or a closed port is a
// SWEEP_QUEUE error within seconds, the password never printed. Skipped without redis-server or
// without the built kb, except in CI (.ci/run installs redis-server and builds first).

const haveKb = existsSync(kbBinJs);
if (!runRedisTests) console.warn(`kb sweep --redis end-to-end tests skipped: ${redisSkipReason}`);

const PASSWORD = "e2e-pa55word";
const scratch = mkdtempSync(join(tmpdir(), "kb-sweep-redis-"));
/** The workers' temp folders (their point topologies) go here, removed with it. */
const workerTmp = join(scratch, "tmp");
mkdirSync(workerTmp);
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A lost point is given to the other worker after about 2 s + 1 s (not the 15 s + 5 s defaults). */
const FAST_LOSS = ["--lock-s", "2", "--stalled-check-s", "1"];

/** 4 sizes x 3 NOC widths of vector-add: 12 points of about a second each. */
function vectorAddSpec(dir: string): string {
  return writeSpec(dir, [
    "name: vadd-redis",
    // A bench name: workers find it from their --root (the repository) as the sweep does from its folder.
    "bench: vector-add",
    `topology: ${join(repoRoot, "topologies", "default.yaml")}`,
    "params: { chunk: 4096 }",
    "axes:",
    "  n: { path: params.n, values: [65536, 131072, 262144, 524288] }",
    "  cols: { path: topology.cube.noc.cols, values: [1, 2, 4] }",
    "metrics:",
    "  time: simTimeNs",
    "  events: events",
    "  hbm: work.hbmBytes",
  ]);
}

describe.skipIf(!runRedisTests || !haveKb)("kb sweep --redis with kb workers on redis-server", () => {
  let redis: RunningRedis | undefined;
  /** KB_REDIS_URL, so the password is on no command line. */
  let env: NodeJS.ProcessEnv = {};

  beforeAll(async () => {
    redis = await startRedis({ dir: join(scratch, "redis"), password: PASSWORD });
    env = { KB_REDIS_URL: redis.url, TMPDIR: workerTmp };
  }, 20_000);

  afterAll(async () => {
    // Everything started, pass or fail: the workers' process groups (their kb run children too),
    // the sweeps, then redis-server.
    await killAll();
    await redis?.stop();
  });

  it("runs 12 points on two workers, one SIGKILLed mid-point: every row once, as the local executor gives", async () => {
    const dir = mkdtempSync(join(scratch, "vadd-"));
    const spec = vectorAddSpec(dir);
    const local = await kb("sweep", spec, "--jobs", "2", "--out", join(dir, "local"));
    expect(local.code, local.stderr).toBe(0);

    // One worker reads KB_REDIS_URL without --redis, the other with a bare --redis.
    const doomed = startKb(["worker", "--queue", "kb-sweep-vadd-redis", ...FAST_LOSS], env);
    const survivor = startKb(["worker", "--redis", "--queue", "kb-sweep-vadd-redis", ...FAST_LOSS], env);
    for (const worker of [doomed, survivor]) await worker.waitForStderr(/taking points of queue/, 15_000);
    const out = join(dir, "redis");
    const sweep = startKb(["sweep", spec, "--redis", "--out", out], env);

    // Killed (the worker and its kb run, as a lost machine) once it has finished one point and
    // holds another.
    const held = await doomed.waitForStderr(/ ok in [^\n]*\npoint (\d+) \([0-9a-f]{12}\) started\n/, 60_000);
    doomed.signalGroup("SIGKILL");
    expect(await doomed.exited).toBe(137);
    const lost = Number(held[1]);

    expect(await sweep.exited, sweep.stderr()).toBe(0);
    expect(sweep.stdout()).toContain(
      "vadd-redis: 12 points (0 from an earlier run, 12 run now): 12 ok, 0 failed",
    );
    // The lost point ran again on the survivor.
    expect(survivor.stderr()).toMatch(new RegExp(`point ${lost} \\([0-9a-f]{12}\\) ok in`));

    const rows = rowsOf(out);
    expect(rows.map((row) => row.point).sort((a, b) => a - b)).toEqual([
      0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11,
    ]);
    expect(new Set(rows.map((row) => row.key)).size).toBe(12);
    expect(rows.every((row) => row.status === "ok")).toBe(true);
    const byPoint = (each: ReturnType<typeof rowsOf>) => [...each].sort((a, b) => a.point - b.point);
    expect(byPoint(rows)).toEqual(byPoint(rowsOf(join(dir, "local"))));

    // Ctrl-C stops the survivor cleanly.
    survivor.signalGroup("SIGINT");
    expect(await survivor.exited).toBe(130);
    expect(survivor.stderr()).toContain("kb worker: SIGINT: stopping");

    // The password is in no output: the URL is printed redacted.
    expect(sweep.stderr()).toContain(
      `queued on redis://:***@127.0.0.1:${redis?.port}, queue kb-sweep-vadd-redis`,
    );
    for (const text of [sweep.stdout(), sweep.stderr(), doomed.stderr(), survivor.stderr()]) {
      expect(text).not.toContain(PASSWORD);
    }
  }, 150_000);

  it("gives a point back at once when Ctrl-C reaches a worker and its kb run, and records it once", async () => {
    const dir = mkdtempSync(join(scratch, "ctrl-c-"));
    const spec = writeSpec(dir, [
      "name: ctrl-c",
      // A bench name: workers find it from their --root (the repository) as the sweep does from its folder.
      "bench: vector-add",
      `topology: ${join(repoRoot, "topologies", "default.yaml")}`,
      "params: { chunk: 4096 }",
      "axes:",
      "  n: { path: params.n, values: [524288, 1048576] }",
    ]);
    // A lock of 300 s: a point left to lapse would come back only after the test's time is up, so
    // the sweep finishing at all says both points were given back.
    const first = startKb(["worker", "--queue", "ctrl-c", "--concurrency", "2", "--lock-s", "300"], env);
    await first.waitForStderr(/taking points of queue/, 15_000);
    const sweep = startKb(["sweep", spec, "--redis", "--queue", "ctrl-c"], env);
    await first.waitForStderr(/started\n[\s\S]*started\n/, 20_000);
    // As a terminal's Ctrl-C: the worker's whole process group, its kb run processes included.
    first.signalGroup("SIGINT");
    expect(await first.exited).toBe(130);
    const second = startKb(["worker", "--queue", "ctrl-c", "--concurrency", "2"], env);
    expect(await sweep.exited, sweep.stderr()).toBe(0);
    expect(sweep.stdout()).toContain("ctrl-c: 2 points (0 from an earlier run, 2 run now): 2 ok, 0 failed");
    // Both points were given back (neither waited for its lock) and ran on the second worker.
    expect(first.stderr()).not.toMatch(/ ok in | FAILED /);
    expect(second.stderr()).toMatch(/point 0 \([0-9a-f]{12}\) ok in/);
    expect(second.stderr()).toMatch(/point 1 \([0-9a-f]{12}\) ok in/);
    expect(rowsOf(join(dir, "results", "ctrl-c")).map((row) => row.status)).toEqual(["ok", "ok"]);
    second.signalGroup("SIGTERM");
    expect(await second.exited).toBe(143);
  }, 45_000);

  it("fails the points of a worker whose bench differs from the sweep's, with the reason; --idle-exit ends the worker after the sweep", async () => {
    const dir = mkdtempSync(join(scratch, "refuse-"));
    writeFileSync(join(dir, "bench.ts"), "export default 1; // the sweep's\n");
    const spec = writeSpec(dir, [
      "name: refused",
      "bench: ./bench.ts",
      `topology: ${join(repoRoot, "topologies", "default.yaml")}`,
      "axes:",
      "  n: { path: params.n, values: [1, 2] }",
    ]);
    const elsewhere = mkdtempSync(join(scratch, "worker-root-"));
    writeFileSync(join(elsewhere, "bench.ts"), "export default 2; // another copy\n");
    // The sweep first, then a worker that ends by itself once the queue has no more work.
    const sweep = startKb(["sweep", spec, "--redis", "--queue", "refused-q"], env);
    await sweep.waitForStderr(/queued on /, 15_000);
    const worker = startKb(
      ["worker", "--queue", "refused-q", "--root", elsewhere, ...FAST_LOSS, "--idle-exit", "2"],
      env,
    );
    const sweepEnded = sweep.exited.then((code) => ({ code, at: performance.now() }));
    const workerEnded = worker.exited.then((code) => ({ code, at: performance.now() }));
    const swept = await sweepEnded;
    expect(swept.code, sweep.stderr()).toBe(0);
    expect(sweep.stdout()).toContain("refused: 2 points (0 from an earlier run, 2 run now): 0 ok, 2 failed");
    const rows = rowsOf(join(dir, "results", "refused"));
    expect(rows).toHaveLength(2);
    for (const row of rows) {
      expect(row.status).toBe("failed");
      expect(row.reason).toMatch(
        new RegExp(
          `^kb worker on .+ refused point ${row.point}: its bench ${join(elsewhere, "bench.ts")} has sha256 [0-9a-f]{12}, the sweep planned with [0-9a-f]{12}\\. Give the worker the same bench file`,
        ),
      );
    }
    expect(worker.stderr()).toMatch(
      /point 0 \([0-9a-f]{12}\) FAILED in [\d.]+ s: kb worker on .+ refused point 0/,
    );
    const idled = await workerEnded;
    expect(idled.code, worker.stderr()).toBe(0);
    // Not before the sweep had its rows, and about 2 s after (checked every 0.5 s).
    expect(idled.at - swept.at).toBeGreaterThan(1000);
    expect(worker.stderr()).toContain(
      "kb worker: nothing run for 2 s and no point waiting, delayed or running on queue refused-q: exiting.\n",
    );
  }, 30_000);

  it("is a SWEEP_QUEUE error within seconds for a wrong password or a closed port, the password not printed", async () => {
    const dir = mkdtempSync(join(scratch, "errors-"));
    const spec = vectorAddSpec(dir);
    const port = redis?.port ?? 0;
    const closed = await freePort();
    const cases = [
      {
        args: ["sweep", spec, "--redis", `redis://:not-${PASSWORD}@127.0.0.1:${port}`],
        message: `[SWEEP_QUEUE] cannot use Redis at 127.0.0.1:${port} (redis://:***@127.0.0.1:${port}): WRONGPASS`,
      },
      {
        args: ["worker", "--redis", `redis://kb:not-${PASSWORD}@127.0.0.1:${closed}`, "--queue", "q"],
        message: `[SWEEP_QUEUE] cannot use Redis at 127.0.0.1:${closed} (redis://kb:***@127.0.0.1:${closed}): connect ECONNREFUSED 127.0.0.1:${closed}: nothing listens there.`,
      },
    ];
    const workerTemps = () => readdirSync(tmpdir()).filter((name) => name.startsWith("kb-worker-"));
    const tempsBefore = workerTemps();
    for (const { args, message } of cases) {
      const started = performance.now();
      const run = await kb(...args);
      expect(performance.now() - started).toBeLessThan(6000);
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(message);
      expect(run.stdout + run.stderr).not.toContain(PASSWORD);
    }
    // The worker that could not start left no temp folder.
    expect(workerTemps()).toEqual(tempsBefore);
  }, 30_000);
});

describe("kb sweep --redis and kb worker usage", () => {
  it("refuse options that mean nothing with a queue, and a missing URL, saying what to give", async () => {
    const dir = mkdtempSync(join(scratch, "usage-"));
    const spec = vectorAddSpec(dir);
    // A spec whose bench is outside its folder, where no worker's --root reaches.
    writeFileSync(join(dir, "bench.ts"), "export default 1;\n");
    mkdirSync(join(dir, "spec"));
    const outside = writeSpec(join(dir, "spec"), [
      "name: outside",
      "bench: ../bench.ts",
      "topology: default",
      "axes:",
      "  n: { path: params.n, values: [1] }",
    ]);
    const saved = process.env.KB_REDIS_URL;
    delete process.env.KB_REDIS_URL;
    try {
      const cases: [string[], string][] = [
        [
          ["sweep", spec, "--redis", "redis://h", "--jobs", "2"],
          "--jobs is for points run here; with --redis each kb worker has its --concurrency.",
        ],
        [
          ["sweep", spec, "--redis", "redis://h", "--cache", "c"],
          "--cache is for points run here; with --redis give each kb worker its own --cache DIR.",
        ],
        [["sweep", spec, "--queue", "q"], "--queue names the queue of --redis: add --redis URL."],
        [["sweep", spec, "--give-up-s", "9"], "--give-up-s is for the Redis of --redis: add --redis URL."],
        [
          ["sweep", outside, "--redis", "redis://h"],
          `[SWEEP_QUEUE] ${outside}: bench ../bench.ts is outside the spec's folder ${join(dir, "spec")}, and kb workers read files only inside their --root`,
        ],
        [
          ["worker", "--queue", "q", "--redis", "redis://h", "--root", join(dir, "none")],
          `kb worker --root ${join(dir, "none")}: ${join(dir, "none")} is not a folder.`,
        ],
        [
          ["sweep", spec, "--redis"],
          "kb sweep needs a Redis URL: --redis redis://HOST:PORT, or the KB_REDIS_URL environment variable",
        ],
        [
          ["worker", "--queue", "q"],
          "kb worker needs a Redis URL: --redis redis://HOST:PORT, or the KB_REDIS_URL environment variable",
        ],
        [
          ["worker", "--queue", "q", "--redis", "redis://h", "--lock-s", "0"],
          'expected a number of seconds > 0, such as 15; got "0"',
        ],
        [
          ["worker", "--queue", "q", "--redis", "redis://h", "--idle-exit", "soon"],
          'expected a number of seconds > 0, such as 15; got "soon"',
        ],
      ];
      for (const [args, message] of cases) {
        const run = await kb(...args);
        expect(run.code).toBe(1);
        expect(run.stderr).toContain(message);
      }
    } finally {
      if (saved !== undefined) process.env.KB_REDIS_URL = saved;
    }
  });
});
