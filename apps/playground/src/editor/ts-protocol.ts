import type { TsService } from "./ts-service.js";

// The messages between the bench editor (ts-client.ts) and its TypeScript worker (ts-worker.ts):
// one call of a TsService method each way. Handled in order, so an `updateFile` posted before a
// `diagnostics` is seen by it.

/** The service's methods, as the worker exposes them. */
export type TsMethod = keyof TsService;

/** Page -> worker: call `method` with `args`. */
export interface TsRequest<M extends TsMethod = TsMethod> {
  readonly id: number;
  readonly method: M;
  readonly args: Parameters<TsService[M]>;
}

/** Worker -> page: the answer to request `id`, or why it failed. */
export type TsResponse =
  | { readonly id: number; readonly ok: true; readonly result: unknown }
  | { readonly id: number; readonly ok: false; readonly message: string };

/**
 * Worker -> page, once: the compiler and the declarations are loaded (`ms` after the worker
 * started), or could not be (`ready: false`, `message` says why; the editor then works without
 * types).
 */
export type TsReady =
  | { readonly id: -1; readonly ready: true; readonly ms: number }
  | { readonly id: -1; readonly ready: false; readonly ms: number; readonly message: string };
