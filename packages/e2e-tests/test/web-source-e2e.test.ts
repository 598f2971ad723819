import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { kb } from "./cli-sources.js";
import { kbWebInChromium, openPage, repo, runBrowserTests, watchedPage } from "./web-e2e-support.js";

// End to end: kb run attention --json writes results with launches[].sites, kb web serves them
// with the kernel's source, and headless Chromium draws the source view: the kernel's lines with
// a bar per line that issued commands (docs/reports.md, "By line"). Screenshot in
// apps/web/test-artifacts/kb-web-source.png.

const ARTIFACTS = repo("apps/web/test-artifacts");

describe.skipIf(!runBrowserTests)("kb web's source view in headless Chromium", () => {
  let lines: { line: string; share: number }[] = [];
  const served = kbWebInChromium("web-source-e2e", async (scratch) => {
    const run = await kb("run", "attention", "--topology", repo("topologies/default.yaml"), "--json");
    expect(run.stderr).toBe("");
    const results = JSON.parse(run.stdout) as {
      launches: { sites?: { lines: { line: string; share: number }[] } }[];
    };
    lines = results.launches[0]?.sites?.lines ?? [];
    writeFileSync(join(scratch, "attention.json"), run.stdout);
    return [join(scratch, "attention.json"), "--topology", repo("topologies/default.yaml")];
  });

  it("shows the kernel's source with a bar on each line that issued commands, the largest share first", async () => {
    const { browser, web } = served();
    const { page, problems } = await watchedPage(browser);
    expect(await openPage(page, web.server.url)).toBeNull();
    // The kernel's lines: every line of the sites table has its row, with its share.
    expect(lines.length).toBeGreaterThan(3);
    const view = page.locator("#source-view");
    expect(await view.getAttribute("data-line-count")).toBe(String(lines.length));
    expect(await view.locator("h3").first().textContent()).toBe("benches/attention.ts");
    const top = lines[0] as { line: string; share: number };
    const row = view.locator(`.source-line[data-site="${top.line}"]`);
    expect(Number(await row.getAttribute("data-share"))).toBe(top.share);
    // The row shows the source text of that line of benches/attention.ts and its share.
    const number = Number(top.line.slice(top.line.lastIndexOf(":") + 1));
    const source = readFileSync(repo("benches/attention.ts"), "utf8").split("\n")[number - 1] ?? "";
    expect(await row.locator("code").textContent()).toBe(source);
    expect(await row.textContent()).toContain(`${(top.share * 100).toFixed(1)}%`);
    // Lines that issued nothing have no bar; the whole file is shown.
    expect(await view.locator(".source-line:not(.sited)").count()).toBeGreaterThan(10);

    // Clicking a line selects it (outlined); clicking again clears it.
    await row.scrollIntoViewIfNeeded();
    await row.click();
    expect(await page.evaluate(() => window.kbWeb?.source?.selected)).toBe(top.line);
    mkdirSync(ARTIFACTS, { recursive: true });
    const screenshot = join(ARTIFACTS, "kb-web-source.png");
    await page.locator("#source").screenshot({ path: screenshot });
    expect(readFileSync(screenshot).subarray(1, 4).toString()).toBe("PNG");
    await row.click();
    expect(await page.evaluate(() => window.kbWeb?.source?.selected)).toBeNull();
    expect(problems).toEqual([]);
    await page.close();
  }, 120_000);
});
