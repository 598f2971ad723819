#!/usr/bin/env node
// The playground's first-run time, measured as a new user meets it: the built site served as
// plain files on localhost, a fresh headless Chromium (empty cache) per sample, from navigation
// to the first results of the default example drawn (Run clicked as soon as the page is ready).
// Prints each sample, then the median and range of each; wall times, not asserted anywhere.
//
//   npx -y pnpm@10 build:playground && node apps/playground/scripts/first-run.mjs [samples, default 5]

import { chromium } from "playwright-core";
import { runnerImport } from "vite";
import { serveStatic } from "./serve.mjs";

// The one definition of the browser tests' Chromium (a TypeScript module, loaded through Vite).
const { module: browsers } = await runnerImport("@kb/tooling/node/chromium");
if (!browsers.haveChromium) {
  console.error(`no Chromium at ${browsers.CHROMIUM}: ${browsers.INSTALL_CHROMIUM}`);
  process.exit(1);
}

const samples = Number(process.argv[2] ?? 5);
const served = await serveStatic();
const poll = async (page, expression) => {
  while ((await page.evaluate(expression)) !== true) await new Promise((resolve) => setTimeout(resolve, 10));
};
const rows = [];
try {
  for (let sample = 0; sample < samples; sample++) {
    const browser = await chromium.launch({
      ...browsers.chromiumLaunchOptions,
      args: [...browsers.chromiumLaunchOptions.args],
    });
    try {
      const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
      const start = performance.now();
      await page.goto(served.url);
      await poll(page, 'document.body.dataset.ready === "true"');
      const ready = performance.now();
      await page.click("#run");
      await poll(page, 'document.body.dataset.runState === "done"');
      const done = performance.now();
      rows.push({ readyMs: ready - start, runMs: done - ready, totalMs: done - start });
      console.log(
        `sample ${sample + 1}: page ready ${(ready - start).toFixed(0)} ms, run + results drawn ${(done - ready).toFixed(0)} ms, load to first results ${(done - start).toFixed(0)} ms`,
      );
    } finally {
      await browser.close();
    }
  }
} finally {
  await served.close();
}
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const summary = (values) =>
  `${median(values).toFixed(0)} ms (${Math.min(...values).toFixed(0)}-${Math.max(...values).toFixed(0)})`;
console.log(
  `median (range) of ${samples}: page ready ${summary(rows.map((r) => r.readyMs))}, run + results drawn ${summary(rows.map((r) => r.runMs))}, load to first results ${summary(rows.map((r) => r.totalMs))}`,
);
