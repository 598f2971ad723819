import type { Executor, ExecutorEvent, JobOutcome, SweepJob } from "./executor.js";
import { parseSweepSpec } from "./spec.js";

// What the tests of @kb/sweep share.

/** The message of the error `parseSweepSpec(text, "s.yaml")` throws; fails when it parses. */
export function specProblem(text: string): string {
  try {
    parseSweepSpec(text, "s.yaml");
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error("expected the spec to be refused");
}

/**
 * The tests' executor: answers each job at once (in a microtask) with `answer(job)`, recording
 * what it was given.
 */
export class FakeExecutor implements Executor {
  readonly concurrency = 1;
  readonly jobs: SweepJob[] = [];
  closed = false;
  private readonly listeners: ((event: ExecutorEvent) => void)[] = [];
  constructor(private readonly answer: (job: SweepJob) => JobOutcome) {}
  submit(job: SweepJob): void {
    this.jobs.push(job);
    queueMicrotask(() => {
      for (const listener of this.listeners) listener({ type: "finished", job, outcome: this.answer(job) });
    });
  }
  onEvent(listener: (event: ExecutorEvent) => void): void {
    this.listeners.push(listener);
  }
  async close(): Promise<void> {
    this.closed = true;
  }
}
