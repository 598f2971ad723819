import { mkdirSync, readFileSync } from "node:fs";
import {
  CHROMIUM,
  chromiumLaunchOptions,
  INSTALL_CHROMIUM,
  runBrowserTests,
} from "@kb/tooling/node/chromium";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DIST_DIR, serveStatic } from "../scripts/serve.mjs";
import { ARTIFACTS, until } from "./chromium-page.js";

// The playground's roofline per launch and its progress line with the host program's plan
// (`sim.progress`) and an estimate, in headless Chromium on the built site (dist/: build the
// playground first, as playground-e2e.test.ts says). Screenshots land in apps/playground/test-artifacts/.

if (!runBrowserTests)
  console.warn(`playground roofline tests skipped: no Chromium at ${CHROMIUM}. ${INSTALL_CHROMIUM}`);

describe.skipIf(!runBrowserTests)("the playground's roofline and progress in Chromium", () => {
  let browser: Browser;
  let served: { url: string; close(): Promise<void> };

  beforeAll(async () => {
    served = await serveStatic({ dir: DIST_DIR });
    browser = await chromium.launch({ ...chromiumLaunchOptions, args: [...chromiumLaunchOptions.args] });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await served?.close();
  });

  it("shows allreduce's position among its sizes with an ETA, then the roofline of each launch", async () => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const problems: string[] = [];
    page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
    try {
      await page.goto(served.url);
      await until(page, 'document.body.dataset.ready !== "false"', 30_000);
      await page.selectOption("#example", "benches/allreduce.ts");
      await until(
        page,
        'document.getElementById("bench-title").textContent.endsWith("allreduce.ts")',
        10_000,
      );
      // 1 KiB to 4 MiB: 13 sizes, the last ones long enough to be seen under way.
      await page.fill("#params", "minBytes=1024 maxBytes=4194304");
      await page.click("#run");
      // The position, the size being run and, once a size is done, the estimate.
      await until(
        page,
        "/ of 13 \\(\\d+(\\.\\d+)? [KM]?i?B\\), ETA /.test(document.getElementById('progress').textContent)",
        60_000,
      );
      const line = (await page.textContent("#progress")) ?? "";
      expect(line).toMatch(/^Running: \d+ of 13 \(\d+(\.\d+)? [KM]?i?B\), ETA \d+(\.\d)? m?s, t = /);
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.locator("#progress").screenshot({ path: `${ARTIFACTS}/progress.png` });
      await until(page, 'document.body.dataset.runState !== "running"', 120_000);
      expect(await page.evaluate("document.body.dataset.runState")).toBe("done");

      // A roofline per launch: 13 all-reduces in the launch menu, each with its points.
      expect(await page.locator("#roofline-launch option").count()).toBe(13);
      const chart = page.locator("#chart-roofline");
      expect(Number(await chart.getAttribute("data-points"))).toBeGreaterThanOrEqual(2);
      expect(Number(await chart.getAttribute("data-ceilings"))).toBeGreaterThanOrEqual(1);
      expect(await chart.getAttribute("data-slopes")).toBe("2");
      await page.selectOption("#roofline-launch", "12");
      await page.locator("#roofline").scrollIntoViewIfNeeded();
      const path = `${ARTIFACTS}/roofline.png`;
      await page.locator("#roofline").screenshot({ path });
      expect(readFileSync(path).subarray(1, 4).toString()).toBe("PNG");
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  }, 180_000);
});
