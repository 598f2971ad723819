import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { kb } from "./cli-sources.js";
import {
  launchChromium,
  openPage,
  type RunningWeb,
  repo,
  runBrowserTests,
  startKbWeb,
  watchedPage,
} from "./web-e2e-support.js";

// End to end: `kb run` writes results and a trace, `kb web` serves them, Debian's Chromium
// (driven by playwright-core, which downloads no browser of its own) renders the page, and the
// test reads the diagram and the timeline through the page's libraries. The screenshot lands in
// apps/web/test-artifacts/ (gitignored). CI (.ci/run) installs Chromium and runs this test; a
// developer's machine without it skips it with a message (see web-e2e-support.ts).

const ARTIFACTS = repo("apps/web/test-artifacts");

describe.skipIf(!runBrowserTests)("kb web in headless Chromium", () => {
  const scratch = mkdtempSync(join(tmpdir(), "kb-web-e2e-"));
  let browser: Browser | null = null;
  let web: RunningWeb | null = null;

  beforeAll(async () => {
    // Two design points of the same bench: results A with its trace on default.yaml, results B
    // on ref-cube.yaml (another topology: compared on purpose).
    const small = ["gemm", "--param", "M=256", "--param", "N=256", "--param", "K=256"];
    const trace = join(scratch, "gemm.trace.json");
    const a = await kb(
      "run",
      ...small,
      "--topology",
      repo("topologies/default.yaml"),
      "--json",
      "--trace",
      trace,
    );
    expect(a.stderr).toBe("");
    writeFileSync(join(scratch, "a.json"), a.stdout);
    const b = await kb(
      "run",
      "gemm",
      "--param",
      "M=512",
      "--param",
      "N=256",
      "--param",
      "K=256",
      "--topology",
      repo("topologies/ref-cube.yaml"),
      "--json",
    );
    expect(b.stderr).toBe("");
    writeFileSync(join(scratch, "b.json"), b.stdout);
    web = await startKbWeb([
      join(scratch, "a.json"),
      join(scratch, "b.json"),
      trace,
      "--topology",
      repo("topologies/default.yaml"),
    ]);
    browser = await launchChromium();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await web?.stop();
    rmSync(scratch, { recursive: true, force: true });
  });

  it("draws the 16 PEs of default.yaml, a timeline with tracks, the charts and the comparison", async () => {
    const { page, problems } = await watchedPage(browser as Browser);
    expect(web?.output()).toContain(`serving on ${web?.server.url}`);
    expect(await openPage(page, web?.server.url ?? "")).toBeNull();
    expect(await page.evaluate(() => document.body.dataset.ready)).toBe("true");

    // The diagram: the attribute the page sets, and the PE nodes Cytoscape actually holds.
    expect(await page.locator("#diagram").getAttribute("data-pe-count")).toBe("16");
    expect(await page.evaluate(() => window.kbWeb?.diagram?.nodes(".pe").length)).toBe(16);
    expect(await page.locator("#diagram canvas").count()).toBeGreaterThan(0);

    // Hovering a PE shows its components' utilisation.
    await page.locator("#diagram").scrollIntoViewIfNeeded();
    // Cytoscape learns of the scroll from the scroll event, dispatched with the next frame.
    await page.evaluate(
      () => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))),
    );
    const spot = await page.evaluate(() => {
      const position = window.kbWeb?.diagram?.getElementById("sip0.cube0.pe0").renderedPosition();
      const box = document.getElementById("diagram")?.getBoundingClientRect();
      return { x: (box?.left ?? 0) + (position?.x ?? 0), y: (box?.top ?? 0) + (position?.y ?? 0) };
    });
    await page.mouse.move(spot.x, spot.y);
    await expect
      .poll(() => page.locator("#diagram-info").textContent(), { timeout: 10_000 })
      .toMatch(/^sip0\.cube0\.pe0\nutilisation \d/);
    expect(await page.locator("#diagram-info").textContent()).toMatch(/pe_gemm \(pe_gemm_v1\): \d+\.\d%/);

    // The timeline: a row per track, and the slices of the whole run (a small run: few enough to draw).
    const trackCount = Number(await page.locator("#timeline-chart").getAttribute("data-track-count"));
    expect(trackCount).toBeGreaterThan(0);
    await expect.poll(() => page.locator("#timeline-chart").getAttribute("data-mode")).toBe("slices");
    const shown = await page.evaluate(() => {
      const handle = window.kbWeb?.timeline;
      return {
        total: handle?.timeline.totalSlices,
        count: handle?.window?.sliceCount,
        sent: handle?.window?.slices?.length,
      };
    });
    expect(shown.count).toBe(shown.total);
    expect(shown.sent).toBe((shown.total ?? 0) * 4);

    // Per-kind charts (one series per results file) and the comparison of A and B.
    expect(await page.locator("#chart-utilisation").getAttribute("data-series")).toBe("2");
    expect(await page.locator("#chart-bandwidth").getAttribute("data-series")).toBe("2");
    const comparison = await page.locator("#comparison-table").textContent();
    expect(comparison).toContain("simulated time");
    expect(comparison).toContain("achieved FLOP/s");
    expect(comparison).toContain("HBM bytes/s");
    expect(comparison).toMatch(/\d x/);
    expect(comparison).toMatch(/launch 1: gemm time/);
    // Results of two topologies: compared, with a note naming both, and kb web's warning.
    expect(await page.locator("#comparison-note").textContent()).toMatch(
      /^A ran on topology "default", B on "ref-cube": a comparison of two designs\./,
    );
    expect(await page.locator("#diagram-note").textContent()).toContain('b.json ran on "ref-cube"');
    expect(web?.output()).toMatch(
      /kb web: warning: .*b\.json ran on topology "ref-cube", the diagram draws "default"/,
    );
    expect(await page.locator("#verification").textContent()).toContain("no verification");

    mkdirSync(ARTIFACTS, { recursive: true });
    const screenshot = join(ARTIFACTS, "kb-web.png");
    await page.screenshot({ path: screenshot, fullPage: true });
    expect(readFileSync(screenshot).subarray(1, 4).toString()).toBe("PNG");
    expect(problems).toEqual([]);
    await page.close();
  }, 120_000);

  it("shows the verification table of a --verify run", async () => {
    const verified = await kb(
      "run",
      "gemm",
      "--param",
      "M=128",
      "--param",
      "N=64",
      "--param",
      "K=64",
      "--verify",
      "--json",
      "--topology",
      repo("topologies/default.yaml"),
    );
    expect(verified.code).toBe(0);
    const file = join(scratch, "verified.json");
    writeFileSync(file, verified.stdout);
    const one = await startKbWeb([file, "--topology", repo("topologies/default.yaml")]);
    const page = await (browser as Browser).newPage();
    try {
      expect(await openPage(page, one.server.url)).toBeNull();
      const table = await page.locator("#verification-tables").textContent();
      expect(table).toMatch(/verified\.json: PASS: 2 of 2 outputs match/);
      expect(table).toContain("C.sip0.cube0");
      expect(await page.locator("#verification td.pass").count()).toBe(2);
      expect(await page.locator("#comparison").textContent()).toContain("Pass two results files");
      expect(await page.locator("#timeline").textContent()).toContain("No trace given");
    } finally {
      await page.close();
      await one.stop();
    }
  }, 120_000);
});
