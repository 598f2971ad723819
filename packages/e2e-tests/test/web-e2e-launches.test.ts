import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { kb } from "./cli-sources.js";
import { kbWebInChromium, openPage, repo, runBrowserTests, watchedPage } from "./web-e2e-support.js";

// End to end: a bench of many launches and a table of its own (allreduce's nccl-tests sweep, 8
// sizes) in kb web: a row per launch in the Launches section, the summary says how many, and the
// bench's table is on the page, as kb run prints it after its summary.

const ARTIFACTS = repo("apps/web/test-artifacts");

describe.skipIf(!runBrowserTests)("kb web of a bench with many launches and its own report", () => {
  let results: { launches: { name: string }[]; report: { title: string; rows: unknown[][] } };
  const served = kbWebInChromium("web-launches-e2e", async (scratch) => {
    const run = await kb("run", "allreduce", "--param", "maxBytes=1024", "--json");
    expect(run.stderr).toBe("");
    results = JSON.parse(run.stdout);
    writeFileSync(join(scratch, "allreduce.json"), run.stdout);
    return [join(scratch, "allreduce.json")];
  });

  it("lists every launch in its own row and shows the nccl-tests table", async () => {
    const { browser, web } = served();
    const { page, problems } = await watchedPage(browser);
    expect(await openPage(page, web.server.url)).toBeNull();
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
