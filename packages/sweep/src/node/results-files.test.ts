import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { SweepJob } from "../executor.js";
import type { SweepRow } from "../table.js";
import { outcomeOf } from "./process-pool.js";
import { ResultsTable } from "./results-files.js";

const scratch = mkdtempSync(join(tmpdir(), "kb-sweep-table-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const row = (point: number, status: "ok" | "failed", time: number | null): SweepRow => ({
  point,
  key: `k${point}`,
  status,
  reason: status === "failed" ? "exit code 1: boom, with a comma" : null,
  digest: status === "ok" ? `d${point}` : null,
  values: { tile: [32, 32, 32], hbm: "hbm3" },
  metrics: { time },
});

describe("results table", () => {
  it("writes a CSV header and a line per row, quoting commas and lists", () => {
    const dir = mkdtempSync(join(scratch, "csv-"));
    const table = ResultsTable.open(dir, ["tile", "hbm"], ["time"]);
    table.append(row(0, "ok", 1500));
    table.append(row(1, "failed", null));
    expect(readFileSync(join(dir, "results.csv"), "utf8")).toBe(
      "point,status,tile,hbm,time,digest,key,reason\n" +
        '0,ok,"[32,32,32]",hbm3,1500,d0,k0,\n' +
        '1,failed,"[32,32,32]",hbm3,,,k1,"exit code 1: boom, with a comma"\n',
    );
  });

  it("resumes from its JSONL: finished points are found, a cut last line is dropped", () => {
    const dir = mkdtempSync(join(scratch, "resume-"));
    const first = ResultsTable.open(dir, ["tile", "hbm"], ["time"]);
    first.append(row(0, "ok", 1500));
    first.append(row(1, "failed", null));
    appendFileSync(join(dir, "results.jsonl"), '{"point":2,"key":"k2","sta');
    const again = ResultsTable.open(dir, ["tile", "hbm"], ["time"]);
    expect(again.row("k0")?.status).toBe("ok");
    expect(again.row("k1")?.status).toBe("failed");
    expect(again.row("k2")).toBeUndefined();
    // Both files are rewritten without the cut line.
    expect(readFileSync(join(dir, "results.jsonl"), "utf8").trim().split("\n")).toHaveLength(2);
    expect(readFileSync(join(dir, "results.csv"), "utf8").trim().split("\n")).toHaveLength(3);
  });

  it("drops failed rows with retryFailed, so their points run again", () => {
    const dir = mkdtempSync(join(scratch, "retry-"));
    const first = ResultsTable.open(dir, ["tile", "hbm"], ["time"]);
    first.append(row(0, "ok", 1500));
    first.append(row(1, "failed", null));
    const again = ResultsTable.open(dir, ["tile", "hbm"], ["time"], { retryFailed: true });
    expect(again.rows().map((each) => each.key)).toEqual(["k0"]);
  });

  it("refuses a file whose middle line is not a row", () => {
    const dir = mkdtempSync(join(scratch, "bad-"));
    writeFileSync(join(dir, "results.jsonl"), 'not json\n{"point":0}\n');
    expect(() => ResultsTable.open(dir, [], [])).toThrow(/results\.jsonl:1: not a row of a sweep's results/);
  });
});

describe("a point's outcome", () => {
  const job = { run: { memoryMb: 256, timeoutS: 5, verify: false } } as unknown as SweepJob;
  const exit = { code: 0, signal: null, stdout: "", stderr: "", timedOut: false, spawnError: null, job };

  it("is ok with the results JSON of an exit 0", () => {
    expect(outcomeOf({ ...exit, stdout: '{"simTimeNs": 5}' })).toEqual({
      status: "ok",
      results: { simTimeNs: 5 },
    });
  });

  it("names out of memory, a timeout, a signal and an error", () => {
    expect(
      outcomeOf({
        ...exit,
        code: 134,
        stderr: "FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory",
      }),
    ).toEqual({ status: "failed", reason: "out of memory (heap limit 256 MB; raise run.memoryMb)" });
    expect(outcomeOf({ ...exit, code: null, signal: "SIGKILL", timedOut: true })).toEqual({
      status: "failed",
      reason: "timed out after 5 s (killed)",
    });
    expect(outcomeOf({ ...exit, code: null, signal: "SIGSEGV" })).toEqual({
      status: "failed",
      reason: "crashed: killed by SIGSEGV",
    });
    expect(outcomeOf({ ...exit, code: 1, stderr: "bad topology\n" })).toEqual({
      status: "failed",
      reason: "exit code 1: bad topology",
    });
  });

  it("keeps the results of a failed verification", () => {
    expect(outcomeOf({ ...exit, code: 1, stdout: '{"verification": {"pass": false}}' })).toEqual({
      status: "failed",
      reason: "verification FAIL",
      results: { verification: { pass: false } },
    });
  });
});
