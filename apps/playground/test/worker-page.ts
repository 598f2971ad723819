import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromiumLaunchOptions } from "@kb/tooling/node/chromium";
import { type Browser, chromium, type Page } from "playwright-core";
import { expect } from "vitest";
import {
  bundleForBrowser,
  formatChain,
  repoRoot,
} from "../../../packages/browser-tests/test/browser-bundle.js";
import type { RunRequest, WorkerToPage } from "../src/protocol.js";

// A page in headless Chromium that runs the playground's worker (src/worker/worker.ts, bundled
// for the browser as the browser tests bundle the packages: esbuild, no Node built-in), served
// from a temporary folder on a free 127.0.0.1 port with no COOP/COEP headers.

export { repoRoot };

/** The page's script: a fresh module worker per run, its messages until `done` or `error`. */
const PAGE_SCRIPT = `
globalThis.kbRunInWorker = (request, cancelAfterMs) => new Promise((resolve) => {
  const worker = new Worker("worker.js", { type: "module" });
  const messages = [];
  const finish = () => { worker.terminate(); resolve(messages); };
  worker.onerror = (event) => { messages.push({ type: "worker-error", message: String(event.message) }); finish(); };
  worker.onmessage = ({ data }) => {
    messages.push(data);
    if (data.type === "done" || data.type === "error") finish();
  };
  worker.postMessage(request);
  if (cancelAfterMs !== undefined) setTimeout(() => { messages.push({ type: "cancelled" }); finish(); }, cancelAfterMs);
});
`;

/** The worker's page: {@link open} it, {@link run} requests, {@link close} it. */
export class WorkerPage {
  private folder = "";
  private server: Server | null = null;
  private browser: Browser | null = null;
  private page: Page | null = null;
  /** Errors the page (not a run) threw. */
  readonly pageErrors: string[] = [];

  /** Bundles the worker, serves it and opens the page. */
  async open(): Promise<void> {
    const bundle = await bundleForBrowser("apps/playground/src/worker/worker.ts");
    expect(bundle.nodeImports.map(formatChain)).toEqual([]);
    this.folder = mkdtempSync(join(tmpdir(), "kb-playground-worker-"));
    const files: Record<string, [string, string]> = {
      "/": ["text/html", '<!doctype html><meta charset="utf-8"><script src="page.js"></script>\n'],
      "/page.js": ["text/javascript", PAGE_SCRIPT],
      "/worker.js": ["text/javascript", bundle.code],
    };
    for (const [name, [, text]] of Object.entries(files))
      writeFileSync(join(this.folder, name === "/" ? "index.html" : name), text);
    this.server = createServer((request, response) => {
      const file = files[request.url ?? ""];
      if (file === undefined) {
        response.writeHead(404).end();
        return;
      }
      response.writeHead(200, { "content-type": `${file[0]}; charset=utf-8` }).end(file[1]);
    });
    await new Promise<void>((resolve) => this.server?.listen(0, "127.0.0.1", resolve));
    const { port } = this.server.address() as AddressInfo;
    this.browser = await chromium.launch({ ...chromiumLaunchOptions, args: [...chromiumLaunchOptions.args] });
    this.page = await this.browser.newPage();
    this.page.on("pageerror", (error) => this.pageErrors.push(error.message));
    await this.page.goto(`http://127.0.0.1:${port}/`);
    await this.page.waitForFunction(() => "kbRunInWorker" in globalThis);
  }

  /**
   * Posts `request` to a new worker; resolves with every message it answered, the last being
   * `done` or `error` (or `cancelled` when `cancelAfterMs` passed first and the worker was terminated).
   */
  async run(request: RunRequest, cancelAfterMs?: number): Promise<WorkerToPage[]> {
    if (this.page === null) throw new Error("open the page first");
    return this.page.evaluate(
      ([message, after]) =>
        (
          globalThis as unknown as {
            kbRunInWorker: (request: RunRequest, after: number | undefined) => Promise<WorkerToPage[]>;
          }
        ).kbRunInWorker(message, after),
      [request, cancelAfterMs] as const,
    );
  }

  async close(): Promise<void> {
    await this.browser?.close();
    await new Promise<void>((resolve) =>
      this.server === null ? resolve() : this.server.close(() => resolve()),
    );
    if (this.folder !== "") rmSync(this.folder, { recursive: true, force: true });
  }
}
