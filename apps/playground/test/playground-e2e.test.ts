import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
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

// The playground as a user meets it: the built site (dist/, as `pnpm build:playground` writes it)
// served as plain files, driven in headless Chromium. The results of the default example are
// compared with `kb run` of the same inputs (the built CLI), a mistake in the kernel shows at its
// line, a shared link reproduces the run, and Cancel stops a long run while the page answers.

const repo = (path: string) => fileURLToPath(new URL(`../../../${path}`, import.meta.url));

if (!runBrowserTests) {
  console.warn(
    `playground end-to-end tests skipped: no Chromium at ${CHROMIUM}. Install it with: ${INSTALL_CHROMIUM}`,
  );
}

/** The results JSON without what names the runtime (Node's version vs the browser's engine). */
function comparable(json: string): unknown {
  const results = JSON.parse(json) as { manifest?: Record<string, unknown> };
  if (results.manifest !== undefined) {
    const { node: _runtime, ...manifest } = results.manifest;
    return { ...results, manifest };
  }
  return results;
}

/** Polls `expression` (evaluated in the page) until it is true; throws after `ms`. */
async function until(page: Page, expression: string, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while ((await page.evaluate<boolean>(expression)) !== true) {
    if (Date.now() > deadline) {
      const state = await page.evaluate<string>("document.getElementById('progress')?.textContent ?? ''");
      throw new Error(`not true within ${ms} ms: ${expression} (progress: ${state})`);
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Opens the playground at `url` and waits for its editors. */
async function open(browser: Browser, url: string): Promise<{ page: Page; problems: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  const problems: string[] = [];
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  page.on("response", (response) => {
    if (response.status() >= 400) problems.push(`${response.status()} for ${response.url()}`);
  });
  // Nothing is sent anywhere: every request goes to the site the page came from.
  page.on("request", (request) => {
    const target = new URL(request.url());
    if (/^https?:$/.test(target.protocol) && target.origin !== new URL(url).origin)
      problems.push(`a request to ${request.url()}`);
  });
  await page.goto(url);
  await until(page, 'document.body.dataset.ready !== "false"', 30_000);
  expect(await page.evaluate("document.body.dataset.error ?? null")).toBeNull();
  return { page, problems };
}

/** Clicks Run and waits until the run has ended; returns its state. */
async function runAndWait(page: Page, ms = 60_000): Promise<string> {
  await page.click("#run");
  await until(page, 'document.body.dataset.runState !== "running"', ms);
  return page.evaluate<string>("document.body.dataset.runState");
}

const latestResults = (page: Page) =>
  page.evaluate<string>("window.kbPlayground.runs[window.kbPlayground.runs.length - 1].resultsJson");

describe.skipIf(!runBrowserTests)("the playground in Chromium", () => {
  let browser: Browser;
  let served: { url: string; close(): Promise<void> };

  beforeAll(async () => {
    if (!haveChromium) throw new Error(`no Chromium at ${CHROMIUM}: ${INSTALL_CHROMIUM}`);
    if (!existsSync(`${DIST_DIR}index.html`)) {
      // CI builds before it tests (turbo); a fresh clone running this file alone builds here.
      const build = spawnSync("npx", ["-y", "pnpm@10", "run", "build"], {
        cwd: repo("apps/playground"),
        encoding: "utf8",
      });
      if (build.status !== 0)
        throw new Error(`the playground did not build:\n${build.stdout}${build.stderr}`);
    }
    served = await serveStatic({ dir: DIST_DIR });
    browser = await chromium.launch({ ...chromiumLaunchOptions, args: [...chromiumLaunchOptions.args] });
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    await served?.close();
  });

  let defaultJson = "";

  it("runs the default example with the results of kb run on the same inputs", async () => {
    const { page, problems } = await open(browser, served.url);
    try {
      expect(await page.inputValue("#params")).toBe("n=65536");
      expect(await runAndWait(page)).toBe("done");
      defaultJson = await latestResults(page);
      const cli = spawnSync(
        process.execPath,
        [
          repo("apps/cli/dist/bin.js"),
          "run",
          repo("benches/vector-add.ts"),
          "--topology",
          repo("topologies/default.yaml"),
          "--param",
          "n=65536",
          "--verify",
          "--json",
        ],
        { encoding: "utf8", cwd: repo(".") },
      );
      expect(cli.status, cli.stderr).toBe(0);
      const expected = JSON.parse(cli.stdout) as { simTimeNs: number };
      const got = JSON.parse(defaultJson) as { simTimeNs: number };
      expect(got.simTimeNs).toBe(expected.simTimeNs);
      expect(comparable(defaultJson)).toEqual(comparable(cli.stdout));
      // The reused views drew: a verdict per launch, the verification table, the timeline's tracks.
      expect(await page.locator("#verdict-list li").count()).toBeGreaterThan(0);
      expect(await page.locator("#verification-tables table").count()).toBe(1);
      expect(Number(await page.getAttribute("#timeline-chart", "data-track-count"))).toBeGreaterThan(0);
      expect(await page.getAttribute("#download-results", "href")).toMatch(/^blob:/);
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  }, 120_000);

  it("shows a mistake in the kernel at its line, jumps there, and keeps the edit when another example is picked", async () => {
    const { page } = await open(browser, served.url);
    try {
      const bench = readFileSync(repo("benches/vector-add.ts"), "utf8").split("\n");
      const line = bench.findIndex((text) => text.includes("tl.load(")) + 1;
      expect(line).toBeGreaterThan(0);
      await page.evaluate(`(() => {
        const view = window.kbPlayground.editors.bench;
        const text = view.state.doc.toString();
        const at = text.indexOf("tl.load(");
        view.dispatch({ changes: { from: at, to: at + "tl.load(".length, insert: "tl.lod(" } });
      })()`);
      expect(await runAndWait(page)).toBe("error");
      // A misspelt op is TL_INVALID_CALL naming the nearest one (issue 33 point 5).
      expect(await page.textContent("#error-code")).toBe("TL_INVALID_CALL");
      expect(await page.textContent("#error-message")).toContain("tl has no op lod; did you mean tl.load?");
      expect(await page.textContent("#error-location")).toMatch(
        new RegExp(`^benches/vector-add\\.ts:${line}:\\d+$`),
      );
      expect(await page.locator("#bench-editor .cm-run-error").count()).toBe(1);
      await page.click("#error-location");
      const cursorLine = await page.evaluate<number>(
        `(() => { const view = window.kbPlayground.editors.bench; return view.state.doc.lineAt(view.state.selection.main.head).number; })()`,
      );
      expect(cursorLine).toBe(line);
      // Opening another example asks before it replaces the edited bench: dismissed, the edit
      // stays; accepted, the example opens.
      const benchText = "window.kbPlayground.editors.bench.state.doc.toString()";
      const dialogs: string[] = [];
      page.once("dialog", (dialog) => {
        dialogs.push(dialog.message());
        void dialog.dismiss();
      });
      await page.selectOption("#example", "benches/exp.ts");
      expect(dialogs).toEqual([
        "Discard your changes to benches/vector-add.ts? (Share keeps them in a link.)",
      ]);
      expect(await page.evaluate<string>(benchText)).toContain("tl.lod(");
      expect(await page.inputValue("#example")).toBe("benches/vector-add.ts");
      page.once("dialog", (dialog) => void dialog.accept());
      await page.selectOption("#example", "benches/exp.ts");
      await until(
        page,
        'document.getElementById("bench-title").textContent.endsWith("benches/exp.ts")',
        10_000,
      );
      expect(await page.evaluate<string>(benchText)).toBe(readFileSync(repo("benches/exp.ts"), "utf8"));
    } finally {
      await page.close();
    }
  }, 120_000);

  it("compares a run with the previous run of the same bench, and marks results stale after a failed run", async () => {
    const { page, problems } = await open(browser, served.url);
    const pick = async (example: string) => {
      await page.selectOption("#example", example);
      await until(
        page,
        `document.getElementById("bench-title").textContent.endsWith(${JSON.stringify(example)})`,
        10_000,
      );
    };
    const compared = () => page.evaluate<string | null>("window.kbPlayground.compared");
    try {
      expect(await runAndWait(page)).toBe("done"); // run 1 · vector-add
      await pick("benches/exp.ts");
      expect(await runAndWait(page)).toBe("done"); // run 2 · exp: no earlier exp, shown alone
      expect(await compared()).toBeNull();
      expect(await page.textContent("#compare-note")).toBe(
        "No earlier run of exp to compare with: run it again, or pin a run to compare others with it.",
      );
      await pick("benches/vector-add.ts");
      expect(await runAndWait(page)).toBe("done"); // run 3 · vector-add, beside run 1
      expect(await compared()).toBe("run 1 · vector-add");
      expect(await page.isHidden("#compare-note")).toBe(true);
      expect(await page.getAttribute("#results", "data-stale")).toBe("false");

      // A failed run: the results of run 3 stay, dimmed, under a note saying whose they are.
      await page.evaluate(`(() => {
        const view = window.kbPlayground.editors.bench;
        const at = view.state.doc.toString().indexOf("tl.load(");
        view.dispatch({ changes: { from: at, to: at + "tl.load(".length, insert: "tl.lod(" } });
      })()`);
      expect(await runAndWait(page)).toBe("error");
      expect(await page.isVisible("#error-panel")).toBe(true);
      expect(await page.getAttribute("#results", "data-stale")).toBe("true");
      expect(await page.textContent("#results-stale")).toBe(
        "Stale: the results below are of run 3 · vector-add; the last run failed (TL_INVALID_CALL).",
      );
      mkdirSync(repo("apps/playground/test-artifacts"), { recursive: true });
      await page.screenshot({ path: repo("apps/playground/test-artifacts/stale-results.png") });
      // Fixed and run again: the mark goes, and the run is put beside run 3.
      await page.evaluate(`(() => {
        const view = window.kbPlayground.editors.bench;
        const at = view.state.doc.toString().indexOf("tl.lod(");
        view.dispatch({ changes: { from: at, to: at + "tl.lod(".length, insert: "tl.load(" } });
      })()`);
      expect(await runAndWait(page)).toBe("done");
      expect(await page.getAttribute("#results", "data-stale")).toBe("false");
      expect(await page.isHidden("#results-stale")).toBe(true);
      expect(await compared()).toBe("run 3 · vector-add");
      expect(await page.isHidden("#error-panel")).toBe(true);

      // A topology error's panel goes as well once the topology is fixed and run again.
      const rename = (from: string, to: string) =>
        page.evaluate(`(() => {
          const view = window.kbPlayground.editors.topology;
          const at = view.state.doc.toString().indexOf(${JSON.stringify(from)});
          view.dispatch({ changes: { from: at, to: at + ${from.length}, insert: ${JSON.stringify(to)} } });
        })()`);
      await rename("\n    channels: 8", "\n    chanels: 8");
      expect(await runAndWait(page)).toBe("error");
      expect(await page.textContent("#error-code")).toMatch(/^TOPOLOGY_/);
      expect(await page.isVisible("#error-panel")).toBe(true);
      await rename("\n    chanels: 8", "\n    channels: 8");
      expect(await runAndWait(page)).toBe("done");
      expect(await page.isHidden("#error-panel")).toBe(true);
      expect(await page.getAttribute("#results", "data-stale")).toBe("false");
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  }, 180_000);

  it("reproduces a run from its shared link", async () => {
    const { page } = await open(browser, served.url);
    let url: string;
    try {
      await page.click("#share");
      await until(page, "window.kbPlayground.shareUrl !== null", 5_000);
      url = await page.evaluate<string>("window.kbPlayground.shareUrl");
      expect(url).toMatch(/#[zj]=[A-Za-z0-9_-]+$/);
    } finally {
      await page.close();
    }
    const { page: shared } = await open(browser, url);
    try {
      // A shared link runs at once.
      await until(
        shared,
        'document.body.dataset.runState === "done" || document.body.dataset.runState === "error"',
        60_000,
      );
      expect(await shared.evaluate("document.body.dataset.runState")).toBe("done");
      expect(comparable(await latestResults(shared))).toEqual(comparable(defaultJson));
    } finally {
      await shared.close();
    }
    // A link pasted into the address bar of a playground tab opened on another example: only the
    // fragment changes (no reload), and the tab opens and runs the shared bench.
    const { page: other } = await open(browser, served.url);
    try {
      await other.selectOption("#example", "benches/exp.ts");
      await until(
        other,
        'document.getElementById("bench-title").textContent.endsWith("benches/exp.ts")',
        10_000,
      );
      await other.evaluate(`location.hash = ${JSON.stringify(new URL(url).hash)}`);
      await until(other, "window.kbPlayground.runs.length === 1", 60_000);
      expect(await other.inputValue("#params")).toBe("n=65536");
      expect(await other.textContent("#bench-title")).toMatch(/benches\/vector-add\.ts$/);
      expect(comparable(await latestResults(other))).toEqual(comparable(defaultJson));
    } finally {
      await other.close();
    }
  }, 120_000);

  it("runs every example of the menu, with its params, to a passing verification", async () => {
    const { page, problems } = await open(browser, served.url);
    try {
      const examples = await page.evaluate<string[]>(
        "[...document.querySelectorAll('#example option')].map((option) => option.value)",
      );
      expect(examples.length).toBeGreaterThanOrEqual(12);
      const failed: string[] = [];
      for (const example of examples) {
        await page.selectOption("#example", example);
        await until(
          page,
          `document.getElementById("bench-title").textContent.endsWith(${JSON.stringify(example)})`,
          10_000,
        );
        const state = await runAndWait(page);
        const progress = await page.textContent("#progress");
        if (state !== "done" || !progress?.includes("verification PASS")) {
          failed.push(
            `${example} (${await page.inputValue("#params")}): ${state}, ${progress} ${await page.textContent("#error-message")}`,
          );
        }
      }
      expect(failed).toEqual([]);
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  }, 180_000);

  it("stops a run at Max events and at Max sim time with RUN_LIMIT, as kb run --max-events / --max-sim-time", async () => {
    const { page } = await open(browser, served.url);
    try {
      await page.fill("#max-events", "500");
      expect(await runAndWait(page)).toBe("error");
      expect(await page.textContent("#error-code")).toBe("RUN_LIMIT");
      // kb run's message, naming the page's field instead of the flag.
      expect(await page.textContent("#error-message")).toContain(
        "the run reached its limit of 500 DES events (Max events) after 500 events",
      );
      await page.fill("#max-events", "");
      await page.fill("#max-sim-time", "1000");
      expect(await runAndWait(page)).toBe("error");
      expect(await page.textContent("#error-message")).toContain(
        "the run reached its limit of 1000 ns of simulated time (Max sim time)",
      );
      // A shared link carries the limits: it reproduces the stopped run.
      await page.click("#share");
      await until(page, "window.kbPlayground.shareUrl !== null", 5_000);
      const { page: shared } = await open(
        browser,
        await page.evaluate<string>("window.kbPlayground.shareUrl"),
      );
      try {
        await until(shared, 'document.body.dataset.runState === "error"', 60_000);
        expect(await shared.inputValue("#max-sim-time")).toBe("1000");
        expect(await shared.textContent("#error-message")).toContain("(Max sim time)");
      } finally {
        await shared.close();
      }
      // Limits above what the run needs change nothing.
      await page.fill("#max-sim-time", "1000000");
      await page.fill("#max-events", "1000000");
      expect(await runAndWait(page)).toBe("done");
      expect(await latestResults(page)).toBe(defaultJson);
    } finally {
      await page.close();
    }
  }, 120_000);

  it("cancels a long run within a second while the page stays responsive", async () => {
    const { page } = await open(browser, served.url);
    try {
      await page.fill("#params", "n=67108864");
      await page.click("#run");
      await until(page, "/events/.test(document.getElementById('progress').textContent)", 30_000);
      // The page answers during the run: a timer fires on time, a click is handled.
      const lateMs = await page.evaluate<number>(
        "new Promise((resolve) => { const t = performance.now(); setTimeout(() => resolve(performance.now() - t - 50), 50); })",
      );
      expect(lateMs).toBeLessThan(200);
      await page.click("#help-button");
      expect(await page.isVisible("#help")).toBe(true);
      expect(await page.evaluate("document.body.dataset.runState")).toBe("running");
      const started = Date.now();
      await page.click("#cancel");
      await until(page, 'document.body.dataset.runState === "cancelled"', 1_000);
      expect(Date.now() - started).toBeLessThan(1_000);
      expect(await page.textContent("#progress")).toMatch(/^Cancelled/);
      // A fresh worker runs the next one.
      await page.fill("#params", "n=65536");
      expect(await runAndWait(page)).toBe("done");
    } finally {
      await page.close();
    }
  }, 120_000);
});
