import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Command } from "commander";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { kb } from "./test-support.js";
import { addWebCommand } from "./web-command.js";
import type { WebServer } from "./web-server.js";

// End to end: `kb run` writes results and a trace, `kb web` serves them, Debian's Chromium
// (driven by playwright-core, which downloads no browser of its own) renders the page, and the
// test reads the diagram and the timeline through the page's libraries. The screenshot lands in
// apps/web/test-artifacts/ (gitignored).
//
// CI (.ci/run) installs Chromium and runs this test; a developer's machine without it skips it
// with a message (set KB_CHROMIUM to use another binary).

const CHROMIUM = process.env.KB_CHROMIUM ?? "/usr/bin/chromium";
const INSTALL = "apt-get update && apt-get install -y chromium";
const haveChromium = existsSync(CHROMIUM);
const inCi = (process.env.CI ?? "") !== "" && process.env.CI !== "false";
if (!haveChromium && !inCi) {
  console.warn(
    `kb web end-to-end test skipped: no Chromium at ${CHROMIUM}. Install Debian's with: ${INSTALL} (CI installs it and runs the test).`,
  );
}

const repo = (path: string) => fileURLToPath(new URL(`../../../${path}`, import.meta.url));
const ARTIFACTS = repo("apps/web/test-artifacts");

describe.skipIf(!haveChromium && !inCi)("kb web in headless Chromium", () => {
  const scratch = mkdtempSync(join(tmpdir(), "kb-web-e2e-"));
  const stop = new AbortController();
  let browser: Browser | null = null;
  let server: WebServer | null = null;
  let served: Promise<unknown> = Promise.resolve();
  let output = "";

  beforeAll(async () => {
    if (!haveChromium) {
      throw new Error(`no Chromium at ${CHROMIUM}: install Debian's chromium with: ${INSTALL}`);
    }
    // Two design points of the same bench: results A with its trace, results B.
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
    const b = await kb("run", "gemm", "--param", "M=512", "--param", "N=256", "--param", "K=256", "--json");
    expect(b.stderr).toBe("");
    writeFileSync(join(scratch, "b.json"), b.stdout);

    // kb web on a free port, in-process: the command as registered, stopped through its signal.
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
      { signal: stop.signal, onListening: (running) => listening(running) },
    );
    served = program.parseAsync(
      [
        "web",
        join(scratch, "a.json"),
        join(scratch, "b.json"),
        trace,
        "--topology",
        repo("topologies/default.yaml"),
        "--port",
        "0",
      ],
      { from: "user" },
    );
    server = await Promise.race([
      started,
      served.then(() => {
        throw new Error(`kb web ended before it listened:\n${output}`);
      }),
    ]);

    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      // As root in a container: no sandbox; no GPU; nothing that calls out to Google's services.
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
      ],
    });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    stop.abort();
    await served;
    rmSync(scratch, { recursive: true, force: true });
  });

  it("draws the 16 PEs of default.yaml, a timeline with tracks, the charts and the comparison", async () => {
    const page = await (browser as Browser).newPage({ viewport: { width: 1400, height: 900 } });
    const problems: string[] = [];
    page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
    page.on("console", (message) => {
      if (message.type() === "error") problems.push(`console error: ${message.text()}`);
    });
    page.on("response", (response) => {
      if (response.status() >= 400) problems.push(`${response.status()} for ${response.url()}`);
    });

    expect(output).toContain(`serving on ${server?.url}`);
    await page.goto(server?.url ?? "");
    await page.waitForFunction(() => document.body.dataset.ready !== "false", null, { timeout: 60_000 });
    expect(await page.evaluate(() => document.body.dataset.error ?? null)).toBeNull();
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

    // The timeline: rows on the chart's category axis, and slices in its series.
    const trackCount = Number(await page.locator("#timeline-chart").getAttribute("data-track-count"));
    expect(trackCount).toBeGreaterThan(0);
    const axis = await page.evaluate(() => {
      const option = window.kbWeb?.timeline?.getOption() as
        | { yAxis: { data: string[] }[]; series: { data: unknown[] }[] }
        | undefined;
      return { rows: option?.yAxis[0]?.data.length ?? 0, slices: option?.series[0]?.data.length ?? 0 };
    });
    expect(axis.rows).toBe(trackCount);
    expect(axis.slices).toBeGreaterThan(0);

    // Per-kind charts (one series per results file) and the comparison of A and B.
    expect(await page.locator("#chart-utilisation").getAttribute("data-series")).toBe("2");
    expect(await page.locator("#chart-bandwidth").getAttribute("data-series")).toBe("2");
    const comparison = await page.locator("#comparison-table").textContent();
    expect(comparison).toContain("simulated time");
    expect(comparison).toContain("achieved FLOP/s");
    expect(comparison).toContain("HBM bytes/s");
    expect(comparison).toMatch(/\d x/);
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
    const stopOne = new AbortController();
    let listening: (server: WebServer) => void = () => {};
    const started = new Promise<WebServer>((resolvePromise) => {
      listening = resolvePromise;
    });
    const program = new Command("kb").exitOverride();
    addWebCommand(
      program,
      { stdout: { write: () => true }, stderr: { write: () => true } },
      { signal: stopOne.signal, onListening: (running) => listening(running) },
    );
    const done = program.parseAsync(
      ["web", file, "--port", "0", "--topology", repo("topologies/default.yaml")],
      {
        from: "user",
      },
    );
    const running = await started;
    const page = await (browser as Browser).newPage();
    try {
      await page.goto(running.url);
      await page.waitForFunction(() => document.body.dataset.ready !== "false", null, { timeout: 60_000 });
      const table = await page.locator("#verification-tables").textContent();
      expect(table).toMatch(/verified\.json: PASS: 2 of 2 outputs match/);
      expect(table).toContain("C.sip0.cube0");
      expect(await page.locator("#verification td.pass").count()).toBe(2);
      expect(await page.locator("#comparison").textContent()).toContain("Pass two results files");
      expect(await page.locator("#timeline").textContent()).toContain("No trace given");
    } finally {
      await page.close();
      stopOne.abort();
      await done;
    }
  }, 120_000);
});
