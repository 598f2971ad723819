// Measures the bench editor's lazy TypeScript support on the built playground (dist/) in headless
// Chromium: the gzip size of what its worker loads (the compiler chunk, the declarations) beside
// the page's first chunks, and the time from navigation until the page is ready and until
// completion after `tl.` lists `load`. A measurement, not a test (test/editor-e2e.test.ts checks
// the behaviour); it prints a table.
//
// Usage (after `npx -y pnpm@10 build:playground`):
//   node apps/playground/scripts/measure-editor.mjs [runs=3]

import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { chromium } from "playwright-core";
import { runnerImport } from "vite";
import { DIST_DIR, serveStatic } from "./serve.mjs";

// The one definition of the browser tests' Chromium (a TypeScript module, loaded through Vite).
const { module: browsers } = await runnerImport("@kb/tooling/node/chromium");
if (!browsers.haveChromium) {
  console.error(`no Chromium at ${browsers.CHROMIUM}: ${browsers.INSTALL_CHROMIUM}`);
  process.exit(1);
}
const { chromiumLaunchOptions } = browsers;

const runs = Number(process.argv[2] ?? 3);
const kib = (bytes) => `${(bytes / 1024).toFixed(0)} KiB`;

const html = readFileSync(join(DIST_DIR, "index.html"), "utf8");
const firstLoad = new Set(
  [...html.matchAll(/(?:src|href)="\.?\/?assets\/([^"]+)"/g)].map((match) => match[1]),
);
console.log("asset                                   raw       gzip (zlib level 6)");
for (const name of readdirSync(join(DIST_DIR, "assets")).sort()) {
  const lazyEditor = /^(ts-worker-.*\.js|types-.*\.json)$/.test(name);
  if (!lazyEditor && !firstLoad.has(name)) continue;
  const bytes = readFileSync(join(DIST_DIR, "assets", name));
  const what = lazyEditor ? "editor, lazy" : "first load";
  console.log(
    `${name.padEnd(40)}${kib(bytes.length).padStart(9)}${kib(gzipSync(bytes).length).padStart(11)}  ${what}`,
  );
}

const served = await serveStatic({ dir: DIST_DIR });
const browser = await chromium.launch({ ...chromiumLaunchOptions, args: [...chromiumLaunchOptions.args] });
try {
  console.log("\nrun  page ready (ms)  completion after tl. (ms)   (from navigation)");
  for (let run = 1; run <= runs; run++) {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    await page.goto(served.url);
    await page.waitForFunction(() => document.body.dataset.ready === "true", null, { timeout: 30_000 });
    const readyMs = await page.evaluate(() => performance.now());
    const label = page.locator(".cm-tooltip-autocomplete .cm-completionLabel", { hasText: /^load$/ });
    while ((await label.count()) === 0) {
      await page.evaluate(() => {
        const view = window.kbPlayground?.editors.bench;
        if (view === undefined) return;
        view.focus();
        view.dispatch({
          selection: { anchor: view.state.doc.toString().indexOf("tl.load(") + "tl.".length },
        });
      });
      await page.keyboard.press("Control+Space");
      await label
        .first()
        .waitFor({ timeout: 100 })
        .catch(() => undefined);
    }
    const completedMs = await page.evaluate(() => performance.now());
    console.log(
      `${String(run).padEnd(5)}${readyMs.toFixed(0).padStart(15)}${completedMs.toFixed(0).padStart(27)}`,
    );
    await page.close();
  }
} finally {
  await browser.close();
  await served.close();
}
