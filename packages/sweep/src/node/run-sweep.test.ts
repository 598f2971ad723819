import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sha256Hex } from "@kb/runtime";
import { afterAll, describe, expect, it } from "vitest";
import type { SweepJob } from "../executor.js";
import { parseSweepSpec } from "../spec.js";
import { FakeExecutor } from "../test-support.js";
import { runSweep } from "./run-sweep.js";

const scratch = mkdtempSync(join(tmpdir(), "kb-sweep-run-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function setUp(): { dir: string; benchFile: string; topologyFile: string } {
  const dir = mkdtempSync(join(scratch, "s-"));
  const benchFile = join(dir, "bench.ts");
  const topologyFile = join(dir, "t.yaml");
  writeFileSync(benchFile, "export default {};\n");
  writeFileSync(topologyFile, "name: t\nplugins: [./my-plugin.ts]\n");
  return { dir, benchFile, topologyFile };
}

const spec = parseSweepSpec(
  "name: s\nbench: ./bench.ts\naxes:\n  n: { path: params.n, values: [1, 2, 3] }\nmetrics: { time: simTimeNs }\n",
  "s.yaml",
);

describe("runSweep", () => {
  it("hands the executor names, params and digests, and writes a row per point", async () => {
    const { dir, benchFile, topologyFile } = setUp();
    const digest = await sha256Hex("export default {};\n");
    const results = (job: SweepJob) => ({
      simTimeNs: 10 * (job.inputs.params.n as number),
      manifest: { digest: `m${job.point}`, bench: { digest } },
    });
    const executor = new FakeExecutor((job) => ({ status: "ok", results: results(job) }));
    const summary = await runSweep({ spec, benchFile, topologyFile, outDir: join(dir, "out"), executor });
    expect(summary).toMatchObject({ total: 3, ran: 3, ok: 3, failed: 0, interrupted: false });
    const job = executor.jobs[1] as SweepJob;
    expect(job).toMatchObject({ point: 1, bench: "./bench.ts", benchDigest: digest });
    expect(job.inputs).toEqual({
      topology: { name: "t", plugins: [join(dir, "my-plugin.ts")] },
      params: { n: 2 },
      plugins: [],
    });

    // Run again: every point has its row, nothing is submitted.
    const again = new FakeExecutor(() => ({ status: "failed", reason: "must not run" }));
    const second = await runSweep({
      spec,
      benchFile,
      topologyFile,
      outDir: join(dir, "out"),
      executor: again,
    });
    expect(again.jobs).toEqual([]);
    expect(second).toMatchObject({ total: 3, resumed: 3, ran: 0, ok: 3 });
  });

  it("fails a point whose run used another bench file than the sweep planned with", async () => {
    const { dir, benchFile, topologyFile } = setUp();
    const executor = new FakeExecutor(() => ({
      status: "ok",
      results: { simTimeNs: 1, manifest: { digest: "m", bench: { digest: "0123456789abcdef" } } },
    }));
    const summary = await runSweep({ spec, benchFile, topologyFile, outDir: join(dir, "out"), executor });
    expect(summary).toMatchObject({ ok: 0, failed: 3 });
  });

  it("runs a failed point again up to run.retries times, then records the failure once", async () => {
    const { dir, benchFile, topologyFile } = setUp();
    const retrying = parseSweepSpec(
      "name: s\nbench: ./bench.ts\naxes:\n  n: { path: params.n, values: [1, 2] }\nrun: { retries: 2 }\n",
      "s.yaml",
    );
    // Point 0 fails twice then runs; point 1 always fails.
    const tries = new Map<number, number>();
    const executor = new FakeExecutor((job) => {
      const count = (tries.get(job.point) ?? 0) + 1;
      tries.set(job.point, count);
      return job.point === 0 && count === 3
        ? { status: "ok", results: { simTimeNs: 1 } }
        : { status: "failed", reason: `crash ${count}` };
    });
    const summary = await runSweep({
      spec: retrying,
      benchFile,
      topologyFile,
      outDir: join(dir, "out"),
      executor,
    });
    expect(Object.fromEntries(tries)).toEqual({ 0: 3, 1: 3 });
    expect(summary).toMatchObject({ ok: 1, failed: 1 });
    const lines = readFileSync(join(dir, "out", "results.jsonl"), "utf8")
      .trim()
      .split("\n");
    expect(lines.map((line) => JSON.parse(line).reason)).toEqual(expect.arrayContaining([null, "crash 3"]));
    expect(lines).toHaveLength(2);
  });
});
