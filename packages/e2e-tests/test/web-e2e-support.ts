import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  CHROMIUM,
  chromiumLaunchOptions,
  haveChromium,
  INSTALL_CHROMIUM,
  runBrowserTests,
} from "@kb/tooling/node/chromium";
import type { WebServer } from "@kb/web-ui/server";
import { Command } from "commander";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll } from "vitest";
import { addWebCommand } from "./cli-sources.js";

// What the end-to-end tests of kb web share: Debian's Chromium driven by playwright-core (which
// downloads no browser of its own), kb web started in-process on a free port and stopped, and a
// page that records its errors. CI (.ci/run) installs Chromium; elsewhere the tests skip with a
// message when it is missing (set KB_CHROMIUM to use another binary).

export { runBrowserTests };

if (!runBrowserTests) {
  console.warn(
    `kb web end-to-end tests skipped: no Chromium at ${CHROMIUM}. Install Debian's with: ${INSTALL_CHROMIUM} (CI installs it and runs the tests).`,
  );
}

/** A path in the repository. */
export const repo = (path: string) => fileURLToPath(new URL(`../../../${path}`, import.meta.url));

/** Headless Chromium, or an error saying how to install it. */
export async function launchChromium(): Promise<Browser> {
  if (!haveChromium) {
    throw new Error(`no Chromium at ${CHROMIUM}: install Debian's chromium with: ${INSTALL_CHROMIUM}`);
  }
  return chromium.launch({ ...chromiumLaunchOptions, args: [...chromiumLaunchOptions.args] });
}

/** A `kb web` running in-process. */
export interface RunningWeb {
  readonly server: WebServer;
  /** What it printed (stdout and stderr). */
  output(): string;
  /** Stops it and waits until it has. */
  stop(): Promise<void>;
}

/** Runs `kb web ...args --port 0` in-process, resolving once it listens. */
export async function startKbWeb(args: readonly string[]): Promise<RunningWeb> {
  let output = "";
  const abort = new AbortController();
  const program = new Command("kb").exitOverride();
  let listening: (server: WebServer) => void = () => {};
  const started = new Promise<WebServer>((resolvePromise) => {
    listening = resolvePromise;
  });
  addWebCommand(
    program,
    {
      stdout: { write: (text: string) => (output += text) },
      stderr: { write: (text: string) => (output += text) },
    },
    { signal: abort.signal, onListening: (running) => listening(running) },
  );
  const served = program.parseAsync(["web", ...args, "--port", "0"], { from: "user" });
  const server = await Promise.race([
    started,
    served.then(() => {
      throw new Error(`kb web ended before it listened:\n${output}`);
    }),
  ]);
  return {
    server,
    output: () => output,
    async stop() {
      abort.abort();
      await served;
    },
  };
}

/** A new page whose errors, console errors and failed requests land in the returned list. */
export async function watchedPage(
  browser: Browser,
  viewport = { width: 1400, height: 900 },
): Promise<{ page: Page; problems: string[] }> {
  const page = await browser.newPage({ viewport });
  const problems: string[] = [];
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(`console error: ${message.text()}`);
  });
  page.on("response", (response) => {
    if (response.status() >= 400) problems.push(`${response.status()} for ${response.url()}`);
  });
  return { page, problems };
}

/** Opens `url` and waits until the page has drawn (or failed: its error is returned). */
export async function openPage(page: Page, url: string): Promise<string | null> {
  await page.goto(url);
  // Strings, evaluated in the page: this module is compiled without the DOM's types. Polled with
  // page.evaluate (the DevTools protocol, outside the page's CSP): waitForFunction evaluates its
  // predicate with eval in the page, which kb web's CSP (no 'unsafe-eval') refuses whenever the
  // page is not ready at the first check.
  const deadline = Date.now() + 60_000;
  while ((await page.evaluate<boolean>('document.body.dataset.ready === "false"')) === true) {
    if (Date.now() > deadline) throw new Error(`${url}: the page did not finish drawing within 60 s`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return page.evaluate<string | null>("document.body.dataset.error ?? null");
}

/** What {@link kbWebInChromium} gives a test file once its `beforeAll` has run. */
export interface KbWebFixture {
  readonly browser: Browser;
  readonly web: RunningWeb;
}

/**
 * kb web in Chromium for the tests of one file: before them, `prepare(scratch)` writes the files
 * kb web shows into a temporary folder (`kb run --json` output, traces) and returns kb web's
 * arguments; kb web and Chromium start; after them, everything started is stopped and the folder
 * removed, pass or fail. Call it inside the file's `describe`.
 */
export function kbWebInChromium(
  name: string,
  prepare: (scratch: string) => Promise<string[]>,
): () => KbWebFixture {
  const scratch = mkdtempSync(join(tmpdir(), `kb-${name}-`));
  let browser: Browser | null = null;
  let web: RunningWeb | null = null;
  beforeAll(async () => {
    web = await startKbWeb(await prepare(scratch));
    browser = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await web?.stop();
    rmSync(scratch, { recursive: true, force: true });
  });
  return () => {
    if (browser === null || web === null) throw new Error(`${name}: kb web or Chromium did not start`);
    return { browser, web };
  };
}
