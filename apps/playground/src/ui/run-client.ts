import type {
  RunDoneMessage,
  RunErrorMessage,
  RunProgressMessage,
  RunRequest,
  WorkerToPage,
} from "../protocol.js";

// The page's side of the run worker: one run at a time; Cancel terminates the worker (a run
// cannot be interrupted from outside any other way) and starts a fresh one, so the next run
// does not wait for a worker to load.

/** What a run ended with. */
export type RunOutcome =
  | { readonly kind: "done"; readonly message: RunDoneMessage }
  | { readonly kind: "error"; readonly message: RunErrorMessage }
  | { readonly kind: "cancelled" };

/** Runs benches in a Web Worker. */
export class RunClient {
  private worker: Worker;
  private nextId = 1;
  private current: {
    id: number;
    onProgress: (message: RunProgressMessage) => void;
    settle: (outcome: RunOutcome) => void;
  } | null = null;

  constructor(private readonly createWorker: () => Worker) {
    this.worker = this.start();
  }

  /** Whether a run is under way. */
  get running(): boolean {
    return this.current !== null;
  }

  /**
   * Runs `request` (its id assigned here) and resolves with how it ended; `onProgress` hears the
   * worker's progress. A run asked while another is under way cancels that one first.
   */
  run(
    request: Omit<RunRequest, "id" | "type">,
    onProgress: (message: RunProgressMessage) => void,
  ): Promise<RunOutcome> {
    if (this.current !== null) this.cancel();
    const id = this.nextId++;
    return new Promise<RunOutcome>((resolve) => {
      this.current = {
        id,
        onProgress,
        settle: (outcome) => {
          this.current = null;
          resolve(outcome);
        },
      };
      this.worker.postMessage({ ...request, type: "run", id } satisfies RunRequest);
    });
  }

  /** Stops the run under way (its promise resolves `cancelled`) and starts a fresh worker. */
  cancel(): void {
    const current = this.current;
    if (current === null) return;
    this.worker.terminate();
    this.worker = this.start();
    current.settle({ kind: "cancelled" });
  }

  private start(): Worker {
    const worker = this.createWorker();
    worker.addEventListener("message", (event: MessageEvent<WorkerToPage>) => {
      const message = event.data;
      const current = this.current;
      if (current === null || message.id !== current.id) return;
      if (message.type === "progress") current.onProgress(message);
      else if (message.type === "done") current.settle({ kind: "done", message });
      else current.settle({ kind: "error", message });
    });
    worker.addEventListener("error", (event) => {
      const current = this.current;
      if (current === null) return;
      event.preventDefault();
      current.settle({
        kind: "error",
        message: {
          type: "error",
          id: current.id,
          code: "INTERNAL",
          message: `the run worker failed: ${event.message || "it could not be loaded"}`,
          location: null,
        },
      });
      // A worker that threw at top level may be unusable: the next run gets a new one.
      this.worker.terminate();
      this.worker = this.start();
    });
    return worker;
  }
}
