/// <reference lib="dom" />
import type { TsMethod, TsReady, TsRequest, TsResponse } from "./ts-protocol.js";
import type { EditorCompletions, EditorDiagnostic, EditorHover, TsService } from "./ts-service.js";

// The page's side of the bench editor's TypeScript worker: starts it when asked (after the page
// has shown, see `startWhenIdle`), keeps the bench's files for it, and turns calls into messages.

/** The state of the TypeScript worker, for the page to show ("types loading..."). */
export type TsStatus = "idle" | "loading" | "ready" | "failed";

/** The bench editor's connection to its TypeScript worker. One per page (see {@link tsClient}). */
export class TsClient {
  private worker: Worker | null = null;
  private files: Readonly<Record<string, string>> = {};
  private nextId = 0;
  private readonly pending = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  private readonly listeners = new Set<(status: TsStatus) => void>();
  private currentStatus: TsStatus = "idle";
  /** Wall time from `start()` until the worker answered ready (ms), for the README's figure. */
  readyMs: number | null = null;
  /** Why the worker failed, when `status` is `failed`. */
  failure: string | null = null;

  get status(): TsStatus {
    return this.currentStatus;
  }

  /** Calls `listener` on every status change; returns the function that removes it. */
  onStatus(listener: (status: TsStatus) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Gives the bench and the files it imports (virtual path -> text), replacing the previous set.
   * Kept until the worker starts.
   */
  setFiles(files: Readonly<Record<string, string>>): void {
    this.files = { ...files };
    if (this.worker !== null) void this.call("setFiles", this.files).catch(() => undefined);
  }

  /** Starts the worker (loads the compiler chunk and the declarations); a second call does nothing. */
  start(): void {
    if (this.worker !== null) return;
    const started = performance.now();
    const worker = new Worker(new URL("./ts-worker.ts", import.meta.url), { type: "module" });
    this.worker = worker;
    worker.onmessage = (event: MessageEvent<TsResponse | TsReady>) => {
      const message = event.data;
      if (message.id === -1 && "ready" in message) {
        this.readyMs = performance.now() - started;
        if (message.ready) this.setStatus("ready");
        else this.fail(message.message);
        return;
      }
      const waiting = this.pending.get(message.id);
      if (waiting === undefined) return;
      this.pending.delete(message.id);
      if ("ok" in message && message.ok) waiting.resolve(message.result);
      else waiting.reject(new Error("message" in message ? message.message : "unknown"));
    };
    worker.onerror = (event) => this.fail(event.message || "the TypeScript worker could not be loaded");
    this.setStatus("loading");
    void this.call("setFiles", this.files).catch(() => undefined);
  }

  /**
   * Starts the worker once the page has loaded and the main thread is idle, so that neither the
   * first paint nor the first run waits for the compiler.
   */
  startWhenIdle(): void {
    if (this.worker !== null || typeof window === "undefined") return;
    const idle = () => {
      const request = (
        window as { requestIdleCallback?: (callback: () => void, options?: { timeout: number }) => void }
      ).requestIdleCallback;
      if (request === undefined) setTimeout(() => this.start(), 0);
      else request(() => this.start(), { timeout: 2000 });
    };
    if (document.readyState === "complete") idle();
    else window.addEventListener("load", idle, { once: true });
  }

  /** Syntax and type errors of `path` with text `text`; empty until the worker is ready. */
  async diagnostics(path: string, text: string): Promise<EditorDiagnostic[]> {
    if (this.currentStatus !== "ready") return [];
    this.call("updateFile", path, text).catch(() => undefined);
    return this.call("diagnostics", path);
  }

  /** Completions at `position` of `path` with text `text`; null until the worker is ready. */
  async completions(path: string, text: string, position: number): Promise<EditorCompletions | null> {
    if (this.currentStatus !== "ready") return null;
    this.call("updateFile", path, text).catch(() => undefined);
    return this.call("completions", path, position);
  }

  /** The signature and documentation of completion `name` (asked after `completions`). */
  async completionDetail(path: string, position: number, name: string): Promise<EditorHover | null> {
    if (this.currentStatus !== "ready") return null;
    return this.call("completionDetail", path, position, name);
  }

  /** The type at `position` of `path` with text `text`; null until the worker is ready. */
  async hover(path: string, text: string, position: number): Promise<EditorHover | null> {
    if (this.currentStatus !== "ready") return null;
    this.call("updateFile", path, text).catch(() => undefined);
    return this.call("hover", path, position);
  }

  private call<M extends TsMethod>(
    method: M,
    ...args: Parameters<TsService[M]>
  ): Promise<ReturnType<TsService[M]>> {
    const worker = this.worker;
    if (worker === null) return Promise.reject(new Error("the TypeScript worker has not started"));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      worker.postMessage({ id, method, args } satisfies TsRequest<M>);
    });
  }

  private fail(message: string): void {
    this.failure = message;
    this.setStatus("failed");
    for (const waiting of this.pending.values()) waiting.reject(new Error(message));
    this.pending.clear();
  }

  private setStatus(status: TsStatus): void {
    this.currentStatus = status;
    for (const listener of this.listeners) listener(status);
  }
}

let shared: TsClient | null = null;

/** The page's one TypeScript client (created on first use; the worker starts later). */
export function tsClient(): TsClient {
  shared ??= new TsClient();
  return shared;
}

/**
 * Gives the bench editor the example's files (virtual path -> text: the bench and what it imports
 * by relative path, as the run request carries them), so `./lib/params.js` imports resolve. Call
 * it when an example is opened; the editor's own text is sent with each check.
 */
export function setFiles(files: Readonly<Record<string, string>>): void {
  tsClient().setFiles(files);
}
