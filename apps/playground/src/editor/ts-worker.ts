/// <reference lib="dom" />
import ts from "typescript";
import type { TsReady, TsRequest, TsResponse } from "./ts-protocol.js";
import { createTsService, type TsService } from "./ts-service.js";

// The bench editor's TypeScript worker: the compiler (the lazily loaded chunk) and the
// declarations (generated/types.json, fetched as an asset), answering ts-protocol.ts requests in
// order. Started by ts-client.ts after the page has shown.

// The worker's global, typed by what it uses (the repository's programs type-check with lib dom).
const scope = self as unknown as {
  onmessage: ((event: MessageEvent<TsRequest>) => void) | null;
  postMessage(message: TsResponse | TsReady): void;
};

const started = performance.now();
const queue: TsRequest[] = [];
let service: TsService | null = null;

scope.onmessage = (event: MessageEvent<TsRequest>) => {
  queue.push(event.data);
  if (service !== null) drain(service);
};

void (async () => {
  const response = await fetch(new URL("./generated/types.json", import.meta.url));
  if (!response.ok)
    throw new Error(`the bench editor's declarations (${response.url}): HTTP ${response.status}`);
  const types = (await response.json()) as Record<string, string>;
  const ready = createTsService(ts, types);
  // Load the lib files and declarations now (a check of an empty file), not at the first keystroke.
  ready.setFiles({ "__warm_up__.ts": 'import type {} from "@kb/runtime";\n' });
  ready.diagnostics("__warm_up__.ts");
  ready.setFiles({});
  service = ready;
  scope.postMessage({ id: -1, ready: true, ms: performance.now() - started });
  drain(ready);
})().catch((error: unknown) => {
  scope.postMessage({ id: -1, ready: false, ms: performance.now() - started, message: String(error) });
});

function drain(ready: TsService): void {
  for (let request = queue.shift(); request !== undefined; request = queue.shift()) {
    let response: TsResponse;
    try {
      const method = ready[request.method] as (...args: unknown[]) => unknown;
      response = { id: request.id, ok: true, result: method(...(request.args as unknown[])) };
    } catch (error) {
      response = { id: request.id, ok: false, message: (error as Error).message };
    }
    scope.postMessage(response);
  }
}
