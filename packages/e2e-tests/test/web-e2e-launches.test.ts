import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
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

// End to end: a bench of many launches and a table of its own (allreduce's nccl-tests sweep, 8
// sizes) in kb web: a row per launch in the Launches section, the summary says how many, and the
// bench's table is on the page, as kb run prints it after its summary.

const ARTIFACTS = repo("apps/web/test-artifacts");

describe.skipIf(!runBrowserTests)("kb web of a bench with many launches and its own report", () => {
  const scratch = mkdtempSync(join(tmpdir(), "kb-web-launches-e2e-"));
  let browser: Browser | null = null;
  let web: RunningWeb | null = null;
  let results: { launches: { name: string }[]; report: { title: string; rows: unknown[][] } };

  beforeAll(async () => {
    const run = await kb("run", "allreduce", "--param", "maxBytes=1024", "--json");
    expect(run.stderr).toBe("");
    results = JSON.parse(run.stdout);
    writeFileSync(join(scratch, "allreduce.json"), run.stdout);
    web = await startKbWeb([join(scratch, "allreduce.json")]);
    browser = await launchChromium();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await web?.stop();
    rmSync(scratch, { recursive: true, force: true });
  });

  it("lists every launch in its own row and shows the nccl-tests table", async () => {
    const { page, problems } = await watchedPage(browser as Browser);
    expect(await openPage(page, web?.server.url ?? "")).toBeNull();
    // 8 sizes from 8 B to 1 KiB: 8 launches, 8 rows of the report.
    expect(results.launches).toHaveLength(8);
    expect(results.report.rows).toHaveLength(8);
    expect(await page.locator("#launches-tables tbody tr").count()).toBe(8);
    expect(await page.locator("#launches-tables caption").textContent()).toBe("allreduce.json: 8 launch(es)");
    const summary = await page.locator("#summary-table").textContent();
    expect(summary).toMatch(/8 launches, [\d.]+ [nµm]?s in kernels \(see Launches\)/);
    expect(await page.isVisible("#bench-report")).toBe(true);
    expect(await page.locator("#report-tables caption").textContent()).toBe(
      `allreduce.json: ${results.report.title}`,
    );
    expect(await page.locator("#report-tables tbody tr").count()).toBe(8);
    const firstRow = await page
      .locator("#report-tables tbody tr")
      .first()
      .locator("td")
      .evaluateAll((cells) => cells.map((cell) => cell.textContent));
    expect(firstRow).toEqual((results.report.rows[0] as unknown[]).map(String));
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.locator("#launches").screenshot({ path: join(ARTIFACTS, "kb-web-launches.png") });
    expect(problems).toEqual([]);
    await page.close();
  }, 120_000);
});
