import { existsSync, readdirSync } from "node:fs";
import {
  CHROMIUM,
  chromiumLaunchOptions,
  haveChromium,
  INSTALL_CHROMIUM,
  runBrowserTests,
} from "@kb/tooling/node/chromium";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DIST_DIR, serveStatic } from "../scripts/serve.mjs";

// The editors' language support as a user meets it, on the built playground (dist/, as
// playground-e2e.test.ts serves it): completion after `tl.`, the type-error marker of a misspelt
// `tl.lod(` with TypeScript's message, and the topology editor's marker with the CLI's message.

describe.skipIf(!runBrowserTests)("the playground's editors in Chromium", () => {
  let browser: Browser;
  let served: { url: string; close(): Promise<void> };
  let page: Page;

  beforeAll(async () => {
    if (!haveChromium) throw new Error(`no Chromium at ${CHROMIUM}: ${INSTALL_CHROMIUM}`);
    if (!existsSync(`${DIST_DIR}index.html`) || !readdirSync(`${DIST_DIR}assets`).some(isTsWorker)) {
      throw new Error(
        "the playground is not built with its editors: npx -y pnpm@10 --filter @kb/playground build",
      );
    }
    served = await serveStatic({ dir: DIST_DIR });
    browser = await chromium.launch({ ...chromiumLaunchOptions, args: [...chromiumLaunchOptions.args] });
    page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    await page.goto(served.url);
    await page.waitForFunction(() => document.body.dataset.ready === "true", null, { timeout: 30_000 });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await served?.close();
  });

  it("lists the members of tl after `tl.` (Ctrl+Space) once the types have loaded", async () => {
    const label = page.locator(".cm-tooltip-autocomplete .cm-completionLabel", { hasText: /^load$/ });
    // Before the worker is ready the editor offers nothing: ask again until it answers.
    for (let attempt = 0; attempt < 60 && (await label.count()) === 0; attempt++) {
      await page.evaluate(() => {
        const view = window.kbPlayground?.editors.bench;
        if (view === undefined) return;
        const at = view.state.doc.toString().indexOf("tl.load(") + "tl.".length;
        view.focus();
        view.dispatch({ selection: { anchor: at } });
      });
      await page.keyboard.press("Control+Space");
      await label
        .first()
        .waitFor({ timeout: 500 })
        .catch(() => undefined);
    }
    expect(await label.count()).toBe(1);
    const labels = await page.locator(".cm-tooltip-autocomplete .cm-completionLabel").allTextContents();
    // CodeMirror renders at most 100 options (maxRenderedOptions) around the selected one, and tl
    // has more members than that: check members near `load`, where the cursor is.
    expect(labels).toEqual(expect.arrayContaining(["load", "loadAsync", "programId"]));
    await page.keyboard.press("Escape");
  }, 60_000);

  it("marks a misspelt tl.lod( with TypeScript's message", async () => {
    await page.evaluate(() => {
      const view = window.kbPlayground?.editors.bench;
      if (view === undefined) return;
      const at = view.state.doc.toString().indexOf("tl.load(");
      view.dispatch({ changes: { from: at, to: at + "tl.load(".length, insert: "tl.lod(" } });
    });
    const marker = page.locator("#bench-editor .cm-lintRange-error", { hasText: /^lod$/ });
    await marker.waitFor({ timeout: 20_000 });
    await marker.hover();
    await expect
      .poll(() => page.locator(".cm-tooltip-lint").textContent(), { timeout: 5_000 })
      .toContain("Property 'lod' does not exist on type 'TLContext'. Did you mean 'load'?");
  }, 60_000);

  it("marks a misspelt topology key with the message of kb topology validate", async () => {
    await page.evaluate(() => {
      const view = window.kbPlayground?.editors.topology;
      if (view === undefined) return;
      const at = view.state.doc.toString().indexOf("\n    channels: 8") + "\n    ".length;
      view.dispatch({ changes: { from: at, to: at + "channels".length, insert: "chanels" } });
    });
    const marker = page.locator("#topology-editor .cm-lintRange-error", { hasText: /^chanels$/ });
    await marker.waitFor({ timeout: 20_000 });
    await marker.hover();
    await expect
      .poll(() => page.locator(".cm-tooltip-lint").textContent(), { timeout: 5_000 })
      .toMatch(/cube\.hbm\.chanels: unknown key "chanels"; did you mean "channels"\?/);
  }, 60_000);
});

function isTsWorker(name: string): boolean {
  return name.startsWith("ts-worker-") && name.endsWith(".js");
}
