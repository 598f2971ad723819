import { mkdirSync, readFileSync } from "node:fs";
import {
  CHROMIUM,
  chromiumLaunchOptions,
  INSTALL_CHROMIUM,
  runBrowserTests,
} from "@kb/tooling/node/chromium";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DIST_DIR, serveStatic } from "../scripts/serve.mjs";
import { ARTIFACTS, repo, until } from "./chromium-page.js";

// The playground's "Time by kernel line" (the run's per-line figures over the editor's text; a
// click on a line puts the editor's cursor there) and its topology diagram's labels (at least
// 11 px on screen at the default fit, else hidden) on the three reference topologies, in headless
// Chromium at 1400 x 900 on the built site (dist/: build the playground first, as
// playground-e2e.test.ts says). Screenshots land in apps/playground/test-artifacts/.

if (!runBrowserTests)
  console.warn(`playground source view tests skipped: no Chromium at ${CHROMIUM}. ${INSTALL_CHROMIUM}`);

/** The line of the bench editor's cursor. */
const cursorLine = (page: Page) =>
  page.evaluate<number>(
    "(() => { const view = window.kbPlayground.editors.bench; return view.state.doc.lineAt(view.state.selection.main.head).number; })()",
  );

/** The diagram's labels as drawn: how many show, how many are hidden, the smallest on screen (px). */
const diagramLabels = (page: Page) =>
  page.evaluate<{ shown: number; hidden: number; smallestPx: number; zoom: number }>(`(() => {
    const cy = window.kbPlayground.results.handle.diagram;
    const zoom = cy.zoom();
    const nodes = cy.nodes();
    const shown = nodes.filter((node) => node.data("label") !== "");
    const sizes = shown.map((node) => node.data("fontSize") * zoom);
    return { shown: shown.length, hidden: nodes.length - shown.length, smallestPx: Math.min(...sizes), zoom };
  })()`);

describe.skipIf(!runBrowserTests)("the playground's source view and diagram labels in Chromium", () => {
  let browser: Browser;
  let served: { url: string; close(): Promise<void> };
  let page: Page;
  const problems: string[] = [];

  beforeAll(async () => {
    served = await serveStatic({ dir: DIST_DIR });
    browser = await chromium.launch({ ...chromiumLaunchOptions, args: [...chromiumLaunchOptions.args] });
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
    await page.goto(served.url);
    await until(page, 'document.body.dataset.ready !== "false"', 30_000);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await served?.close();
  });

  it("shows the run's time by kernel line over the editor's text; a click on a line moves the cursor there", async () => {
    // The editor's text as run: vector-add with a comment line added on top.
    await page.evaluate(
      'window.kbPlayground.editors.bench.dispatch({ changes: { from: 0, insert: "// edited\\n" } })',
    );
    await page.click("#run");
    await until(page, 'document.body.dataset.runState !== "running"', 60_000);
    expect(await page.evaluate("document.body.dataset.runState")).toBe("done");

    const source = `// edited\n${readFileSync(repo("benches/vector-add.ts"), "utf8")}`.split("\n");
    const commands = source.flatMap((line, at) =>
      /await tl\.(load|add|store)\(/.test(line) ? [at + 1] : [],
    );
    const view = page.locator("#source-view");
    // The kernel's four commands (load x, load y, add, store), each with its bar, in the edited text.
    expect(await view.getAttribute("data-line-count")).toBe("4");
    expect(await view.locator("h3").first().textContent()).toBe("benches/vector-add.ts");
    const sited = await view
      .locator(".source-line.sited")
      .evaluateAll((rows) => rows.map((row) => (row as HTMLElement).dataset.site));
    expect(sited).toEqual(commands.map((line) => `benches/vector-add.ts:${line}`));
    const store = commands[3] as number;
    const row = view.locator(`.source-line[data-site="benches/vector-add.ts:${store}"]`);
    expect(await row.locator("code").textContent()).toBe(source[store - 1]);

    // A click on a line with figures, then on one without: the editor's cursor follows.
    await page.locator("#source").scrollIntoViewIfNeeded();
    await row.click();
    expect(await cursorLine(page)).toBe(store);
    // The same click filters the run's timeline to that line, as in kb web (localTimelineSource).
    await page.waitForSelector("#timeline-filter", { state: "visible", timeout: 30_000 });
    expect(await page.locator("#timeline-filter-text").textContent()).toBe(
      `line benches/vector-add.ts:${store}`,
    );
    expect(await page.locator("#timeline").textContent()).not.toContain("does not filter");
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.locator("#source").screenshot({ path: `${ARTIFACTS}/source-view.png` });
    await view.locator(".source-line").nth(0).click();
    expect(await cursorLine(page)).toBe(1);
    expect(problems).toEqual([]);
  }, 120_000);

  for (const [topology, expected] of [
    ["default.yaml", { hidden: 0 }],
    ["ref-cube.yaml", { hidden: 0 }],
    // 256 PEs: at the fit only the SIPs, cubes and stacks keep their names.
    ["ref-4sip.yaml", { hidden: "some" }],
  ] as const) {
    it(`draws the diagram's labels at least 11 px tall at the default fit on ${topology}`, async () => {
      await page.selectOption("#topology-ref", topology);
      await until(
        page,
        `document.getElementById("topology-title").textContent.endsWith(${JSON.stringify(topology)})`,
        10_000,
      );
      await page.click("#run");
      await until(page, 'document.body.dataset.runState !== "running"', 120_000);
      expect(await page.evaluate("document.body.dataset.runState")).toBe("done");
      const labels = await diagramLabels(page);
      expect(labels.smallestPx).toBeGreaterThanOrEqual(11);
      if (expected.hidden === 0) expect(labels.hidden).toBe(0);
      else expect(labels.hidden).toBeGreaterThan(0);
      await page.locator("#diagram").scrollIntoViewIfNeeded();
      const path = `${ARTIFACTS}/diagram-${topology.replace(".yaml", "")}.png`;
      await page.locator("#diagram").screenshot({ path });
      expect(readFileSync(path).subarray(1, 4).toString()).toBe("PNG");
      // Zoomed in on a PE (four steps of the wheel's 10%... a zoom of 2 here), every label shows.
      const zoomed = await page.evaluate<{ hidden: number; smallestPx: number }>(`(() => {
        const cy = window.kbPlayground.results.handle.diagram;
        cy.zoom({ level: 2, position: cy.getElementById("sip0.cube0.pe0").position() });
        const shown = cy.nodes().filter((node) => node.data("label") !== "");
        return { hidden: cy.nodes().length - shown.length, smallestPx: Math.min(...shown.map((node) => node.data("fontSize") * 2)) };
      })()`);
      expect(zoomed).toEqual({ hidden: 0, smallestPx: 18 });
      expect(problems).toEqual([]);
    }, 180_000);
  }
});
