import { describe, expect, it } from "vitest";
import type { Executor, ExecutorEvent, JobOutcome, SweepJob } from "../../executor.js";
import { jobRunner } from "./pool-runner.js";

/** An executor that finishes jobs when the test says, in any order. */
class ManualExecutor implements Executor {
  readonly concurrency = 4;
  readonly submitted: SweepJob[] = [];
  readonly #listeners: ((event: ExecutorEvent) => void)[] = [];
  submit(job: SweepJob): void {
    this.submitted.push(job);
    this.emit({ type: "started", job });
  }
  onEvent(listener: (event: ExecutorEvent) => void): void {
    this.#listeners.push(listener);
  }
  async close(): Promise<void> {}
  emit(event: ExecutorEvent): void {
    for (const listener of this.#listeners) listener(event);
  }
  finish(job: SweepJob, outcome: JobOutcome): void {
    this.emit({ type: "finished", job, outcome });
  }
}

const job = (point: number): SweepJob => ({
  point,
  key: `key-${point}`,
  bench: "gemm",
  benchDigest: "d",
  inputs: { topology: {}, params: {}, plugins: [] },
  run: { verify: false, memoryMb: 1024 },
});

describe("jobRunner", () => {
  it("resolves each call with its own job's outcome, whatever order they finish in", async () => {
    const executor = new ManualExecutor();
    const run = jobRunner(executor);
    const first = run(job(1));
    const second = run(job(2));
    expect(executor.submitted.map((each) => each.point)).toEqual([1, 2]);
    executor.finish(executor.submitted[1] as SweepJob, { status: "failed", reason: "exit code 1" });
    executor.finish(executor.submitted[0] as SweepJob, { status: "ok", results: { simTimeNs: 5 } });
    expect(await second).toEqual({ status: "failed", reason: "exit code 1" });
    expect(await first).toEqual({ status: "ok", results: { simTimeNs: 5 } });
  });

  it("tells apart two runs of the same point at once (copies), and ignores jobs it did not submit", async () => {
    const executor = new ManualExecutor();
    const run = jobRunner(executor);
    const outcomes: JobOutcome[] = [];
    const a = run({ ...job(7) }).then((outcome) => outcomes.push(outcome));
    const b = run({ ...job(7) }).then((outcome) => outcomes.push(outcome));
    // Another submitter's job of the same point: not ours.
    executor.finish(job(7), { status: "ok", results: "stranger" });
    await Promise.resolve();
    expect(outcomes).toEqual([]);
    executor.finish(executor.submitted[1] as SweepJob, { status: "ok", results: "b" });
    executor.finish(executor.submitted[0] as SweepJob, { status: "ok", results: "a" });
    // A second report of a finished job changes nothing.
    executor.finish(executor.submitted[0] as SweepJob, { status: "ok", results: "again" });
    await Promise.all([a, b]);
    expect(outcomes).toEqual([
      { status: "ok", results: "b" },
      { status: "ok", results: "a" },
    ]);
  });
});
