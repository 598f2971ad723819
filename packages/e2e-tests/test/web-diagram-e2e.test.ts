import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { kb } from "./cli-sources.js";
import {
  launchChromium,
  openPage,
  repo,
  runBrowserTests,
  startKbWeb,
  watchedPage,
} from "./web-e2e-support.js";

// kb web's topology diagram at 1400 x 900 in headless Chromium on the three reference topologies:
// at the default fit every label drawn is at least 11 px tall on screen (diagram-labels.ts), the
// parts' labels hidden where they would not fit (ref-4sip's 256 PEs) and shown once zoomed in.
// Screenshots in apps/web/test-artifacts/kb-web-diagram-<topology>.png.

const ARTIFACTS = repo("apps/web/test-artifacts");

/** The diagram's labels as drawn: how many show, how many are hidden, the smallest on screen (px). */
const LABELS = `(() => {
  const cy = window.kbWeb.diagram;
  const zoom = cy.zoom();
  const shown = cy.nodes().filter((node) => node.data("label") !== "");
  return {
    shown: shown.length,
    hidden: cy.nodes().length - shown.length,
    smallestPx: Math.min(...shown.map((node) => node.data("fontSize") * zoom)),
  };
})()`;

describe.skipIf(!runBrowserTests)("kb web's diagram labels in headless Chromium", () => {
  const scratch = mkdtempSync(join(tmpdir(), "kb-web-diagram-"));
  let browser: Browser | null = null;
  beforeAll(async () => {
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  for (const [name, partsShown] of [
    ["default", true],
    ["ref-cube", true],
    ["ref-4sip", false],
  ] as const) {
    it(`draws ${name}'s labels at least 11 px tall at the default fit`, async () => {
      const topology = repo(`topologies/${name}.yaml`);
      const run = await kb("run", "vector-add", "--topology", topology, "--param", "n=65536", "--json");
      expect(run.code, run.stderr).toBe(0);
      const file = join(scratch, `${name}.json`);
      writeFileSync(file, run.stdout);
      const web = await startKbWeb([file, "--topology", topology]);
      const { page, problems } = await watchedPage(browser as Browser);
      try {
        expect(await openPage(page, web.server.url)).toBeNull();
        const labels = await page.evaluate<{ shown: number; hidden: number; smallestPx: number }>(LABELS);
        expect(labels.smallestPx).toBeGreaterThanOrEqual(11);
        // The SIPs' and cubes' names always; the PEs', routers' and channels' where they fit.
        const pe = await page.evaluate<string>(
          'window.kbWeb.diagram.getElementById("sip0.cube0.pe0").data("label")',
        );
        expect(pe).toBe(partsShown ? "pe0" : "");
        expect(await page.evaluate('window.kbWeb.diagram.getElementById("sip0.cube0").data("label")')).toBe(
          "sip0.cube0",
        );
        if (partsShown) expect(labels.hidden).toBe(0);
        else expect(labels.hidden).toBeGreaterThan(100);
        await page.locator("#diagram").scrollIntoViewIfNeeded();
        mkdirSync(ARTIFACTS, { recursive: true });
        const screenshot = join(ARTIFACTS, `kb-web-diagram-${name}.png`);
        await page.locator("#diagram").screenshot({ path: screenshot });
        expect(readFileSync(screenshot).subarray(1, 4).toString()).toBe("PNG");
        // Hovering a PE whose label is hidden still names it in full.
        const at = await page.evaluate<{ x: number; y: number }>(`(() => {
          const position = window.kbWeb.diagram.getElementById("sip0.cube0.pe0").renderedPosition();
          const box = document.getElementById("diagram").getBoundingClientRect();
          return { x: box.left + position.x, y: box.top + position.y };
        })()`);
        await page.mouse.move(at.x, at.y);
        await expect
          .poll(() => page.locator("#diagram-info").textContent(), { timeout: 10_000 })
          .toMatch(/^sip0\.cube0\.pe0\n/);
        // Zoomed in to 2, every label shows.
        await page.evaluate("(() => { window.kbWeb.diagram.zoom(2); })()");
        expect((await page.evaluate<{ hidden: number }>(LABELS)).hidden).toBe(0);
        expect(problems).toEqual([]);
      } finally {
        await page.close();
        await web.stop();
      }
    }, 180_000);
  }
});
