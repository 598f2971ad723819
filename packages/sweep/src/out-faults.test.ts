import { spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { isKbError } from "@kb/errors";
import { afterAll, describe, expect, it } from "vitest";
import { LOCK_FILE, OutLock } from "./node/out-lock.js";
import { ResultsTable } from "./node/results-files.js";
import { runSweep } from "./node/run-sweep.js";
import { parseSweepSpec } from "./spec.js";
import { FakeExecutor } from "./test-support.js";

// A results folder is one sweep's record: two sweeps on one --out are refused (each ran every
// point and wrote every row twice), and a full disk is the sweep's output error, not the points'.

const scratch = mkdtempSync(join(tmpdir(), "kb-sweep-out-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const spec = parseSweepSpec(
  "name: s\nbench: ./bench.ts\naxes:\n  n: { path: params.n, values: [1, 2, 3] }\nmetrics: { time: simTimeNs }\n",
  "s.yaml",
);

function setUp(): { dir: string; out: string; files: { benchFile: string; topologyFile: string } } {
  const dir = mkdtempSync(join(scratch, "s-"));
  writeFileSync(join(dir, "bench.ts"), "export default {};\n");
  writeFileSync(join(dir, "t.yaml"), "name: t\n");
  return {
    dir,
    out: join(dir, "out"),
    files: { benchFile: join(dir, "bench.ts"), topologyFile: join(dir, "t.yaml") },
  };
}

const ok = () => ({ status: "ok" as const, results: { simTimeNs: 1 } });

/** A pid of this host that no process has: a child's, after it ended. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"]);
  return Number(child.stdout.toString());
}

function errorOf(run: () => unknown): Error {
  try {
    run();
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected an error");
}

describe("fault: two sweeps on one --out", () => {
  it("refuses the second while the first holds the folder, naming the holder's pid", async () => {
    const { out, files } = setUp();
    mkdirSync(out);
    // The holder: a live process of this host (this one's parent).
    writeFileSync(join(out, LOCK_FILE), `${JSON.stringify({ pid: process.ppid, host: hostname() })}\n`);
    const executor = new FakeExecutor(ok);
    const sweep = runSweep({ spec, ...files, outDir: out, executor });
    await expect(sweep).rejects.toThrow(
      `[SWEEP_OUTPUT] ${join(out, LOCK_FILE)}: another kb sweep (pid ${process.ppid} on ${hostname()}) is writing to ${out}: wait for it to end, or give this sweep another --out. If no such sweep runs, remove ${join(out, LOCK_FILE)}.`,
    );
    expect(executor.jobs).toEqual([]);
    expect(existsSync(join(out, "results.jsonl"))).toBe(false);
    // The holder's lock is left alone.
    expect(JSON.parse(readFileSync(join(out, LOCK_FILE), "utf8")).pid).toBe(process.ppid);
  });

  it("refuses a second sweep of this very process too, and runs once the first has ended", async () => {
    const { out, files } = setUp();
    const lock = OutLock.acquire(out);
    expect(() => OutLock.acquire(out)).toThrow(`(pid ${process.pid} on ${hostname()})`);
    lock.release();
    expect(existsSync(join(out, LOCK_FILE))).toBe(false);
    const summary = await runSweep({ spec, ...files, outDir: out, executor: new FakeExecutor(ok) });
    expect(summary).toMatchObject({ ran: 3, ok: 3 });
  });

  it("takes over a lock left by a process of this host that is gone, with a warning", async () => {
    const { out, files } = setUp();
    mkdirSync(out);
    const gone = deadPid();
    writeFileSync(join(out, LOCK_FILE), `${JSON.stringify({ pid: gone, host: hostname() })}\n`);
    const warnings: string[] = [];
    const summary = await runSweep({
      spec,
      ...files,
      outDir: out,
      executor: new FakeExecutor(ok),
      onWarning: (message) => warnings.push(message),
    });
    expect(summary).toMatchObject({ ran: 3, ok: 3 });
    expect(warnings).toEqual([
      `took over the lock of ${out}: the kb sweep that left it (pid ${gone} on ${hostname()}) no longer runs.`,
    ]);
    expect(existsSync(join(out, LOCK_FILE))).toBe(false);
  });

  it("does not take over a lock of another host: it says to remove it if no sweep runs there", () => {
    const { out } = setUp();
    mkdirSync(out);
    writeFileSync(join(out, LOCK_FILE), `${JSON.stringify({ pid: deadPid(), host: "elsewhere" })}\n`);
    expect(errorOf(() => OutLock.acquire(out)).message).toMatch(
      /on elsewhere\) is writing to .*If no such sweep runs, remove .*\.kb-sweep\.lock\.$/,
    );
  });

  it("removes the lock when the sweep ends, is interrupted, or fails", async () => {
    const { out, files } = setUp();
    await runSweep({ spec, ...files, outDir: out, executor: new FakeExecutor(ok) });
    expect(existsSync(join(out, LOCK_FILE))).toBe(false);

    const controller = new AbortController();
    const interrupted = await runSweep({
      spec,
      ...files,
      outDir: join(out, "b"),
      retryFailed: true,
      signal: controller.signal,
      executor: new FakeExecutor(() => {
        controller.abort();
        return ok();
      }),
    });
    expect(interrupted.interrupted).toBe(true);
    expect(existsSync(join(out, "b", LOCK_FILE))).toBe(false);

    const bad = join(out, "c");
    mkdirSync(bad);
    writeFileSync(join(bad, "results.jsonl"), "not a row\n{}\n");
    await expect(runSweep({ spec, ...files, outDir: bad, executor: new FakeExecutor(ok) })).rejects.toThrow(
      /not a row of a sweep's results/,
    );
    expect(existsSync(join(bad, LOCK_FILE))).toBe(false);
  });
});

describe.skipIf(!existsSync("/dev/full"))("fault: a full disk under --out", () => {
  it("is an output error naming the file, not a point failure, and the rows written stay valid", async () => {
    const { out, files } = setUp();
    const jsonl = join(out, "results.jsonl");
    let answered = 0;
    let written = "";
    const executor = new FakeExecutor(() => {
      // After the first row is on disk, the disk is full (what is on it stays).
      if (++answered === 2) {
        written = readFileSync(jsonl, "utf8");
        unlinkSync(jsonl);
        symlinkSync("/dev/full", jsonl);
      }
      return ok();
    });
    const failure = await runSweep({ spec, ...files, outDir: out, executor }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(isKbError(failure, "SWEEP_OUTPUT")).toBe(true);
    expect((failure as Error).message).toMatch(
      new RegExp(`^\\[SWEEP_OUTPUT\\] ${jsonl}: cannot write ${jsonl}: ENOSPC: no space left on device`),
    );
    expect(executor.closed).toBe(true);
    expect(existsSync(join(out, LOCK_FILE))).toBe(false);
    // The disk has room again: the rows written are read back, no point is recorded as failed.
    unlinkSync(jsonl);
    writeFileSync(jsonl, written);
    const table = ResultsTable.open(out, ["n"], ["time"]);
    expect(table.rows().map((row) => [row.point, row.status])).toEqual([[0, "ok"]]);
  });

  it("refuses a results table that is not a regular file (a device is read for ever)", () => {
    const { out } = setUp();
    mkdirSync(out);
    symlinkSync("/dev/zero", join(out, "results.jsonl"));
    expect(() => ResultsTable.open(out, ["n"], ["time"])).toThrow(
      `${join(out, "results.jsonl")} is not a regular file; a sweep's results table is.`,
    );
  });

  it("is an output error when the table is opened on a full disk", () => {
    const { out } = setUp();
    mkdirSync(out);
    symlinkSync("/dev/full", join(out, `results.csv.tmp-${process.pid}`));
    const error = errorOf(() => ResultsTable.open(out, ["n"], ["time"]));
    expect(isKbError(error, "SWEEP_OUTPUT")).toBe(true);
    expect(error.message).toContain(`cannot write ${join(out, "results.csv")}: ENOSPC`);
  });
});
