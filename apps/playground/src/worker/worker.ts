import type { PageToWorker, WorkerToPage } from "../protocol.js";
import { runErrorMessage } from "./run-error.js";
import { runRequest } from "./run-request.js";

// The playground's run worker (a module Web Worker): it takes a RunRequest (../protocol.ts),
// transpiles and evaluates the bench's files, runs them with runBenchCore of @kb/runtime (the
// orchestration of `kb run`) and answers `done` (the results JSON as `kb run --json` prints it,
// the trace and op log when asked) or `error` (code, message, located in the files), with
// progress messages between.
//
// Cancel is the page terminating the worker (`worker.terminate()`) and starting a new one: a run
// holds nothing outside this worker. It lands within ~50 ms of wall time, because a long run
// yields to the event loop that often (run-limits.ts of @kb/runtime: a macrotask every 50 ms),
// and a worker is terminated between tasks. Runs are taken one at a time, in order.

/** The worker's global scope, as much of it as this file uses (the repository has no DOM types). */
interface WorkerScope {
  postMessage(message: WorkerToPage): void;
  addEventListener(type: "message", listener: (event: { data: PageToWorker }) => void): void;
}

const scope = globalThis as unknown as WorkerScope;
let queue: Promise<void> = Promise.resolve();

scope.addEventListener("message", ({ data }) => {
  if (data?.type !== "run") return;
  queue = queue.then(async () => {
    try {
      scope.postMessage(await runRequest(data, (message) => scope.postMessage(message)));
    } catch (error) {
      scope.postMessage(runErrorMessage(data, error));
    }
  });
});
