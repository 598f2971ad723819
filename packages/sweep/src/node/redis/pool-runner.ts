import type { Executor, JobOutcome, SweepJob } from "../../executor.js";

/**
 * A function that runs one job on `executor` and resolves with its outcome: how `kb worker` runs
 * the points it takes on a `LocalProcessPool`, so that a point's outcome is the same as in a local
 * sweep. Jobs are told apart by identity: give each call its own object (a copy), so the same
 * point twice at once (a job given back to a worker that still runs it) resolves each its own.
 */
export function jobRunner(executor: Executor): (job: SweepJob) => Promise<JobOutcome> {
  const waiting = new Map<SweepJob, (outcome: JobOutcome) => void>();
  executor.onEvent((event) => {
    if (event.type !== "finished") return;
    const resolve = waiting.get(event.job);
    if (resolve === undefined) return;
    waiting.delete(event.job);
    resolve(event.outcome);
  });
  return (job) =>
    new Promise<JobOutcome>((resolve) => {
      waiting.set(job, resolve);
      executor.submit(job);
    });
}
