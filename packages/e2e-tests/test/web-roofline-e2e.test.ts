import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { kb } from "./cli-sources.js";
import { kbWebInChromium, openPage, repo, runBrowserTests, watchedPage } from "./web-e2e-support.js";

// kb web's roofline per launch and the comparison's A-and-B roofline, in headless Chromium at
// 1400 x 900; the screenshots land in apps/web/test-artifacts/ (gitignored) to be looked at.

const ARTIFACTS = repo("apps/web/test-artifacts");

describe.skipIf(!runBrowserTests)("kb web's roofline in headless Chromium", () => {
  const served = kbWebInChromium("web-roofline-e2e", async (scratch) => {
    const gemm = (size: number) => ["gemm", "--param", `M=${size}`, "--param", "N=256", "--param", "K=256"];
    for (const [file, size] of [
      ["a.json", 256],
      ["b.json", 512],
    ] as const) {
      const run = await kb("run", ...gemm(size), "--topology", repo("topologies/default.yaml"), "--json");
      expect(run.stderr).toBe("");
      writeFileSync(join(scratch, file), run.stdout);
    }
    return [join(scratch, "a.json"), join(scratch, "b.json"), "--topology", repo("topologies/default.yaml")];
  });

  it("draws the launch's points under its ceilings and slopes, and A against B in the comparison", async () => {
    const { browser, web } = served();
    const { page, problems } = await watchedPage(browser);
    expect(await openPage(page, web.server.url)).toBeNull();
    const chart = page.locator("#chart-roofline");
    // gemm's one launch: its actual and minimal HBM traffic and the busiest link; PE_GEMM's four
    // dtypes on 3 lines (f16 and bf16 share a peak; no PE_MATH ran: no ceiling of its own); the HBM
    // and the busiest link's slopes.
    expect(await chart.getAttribute("data-points")).toBe("3");
    expect(await chart.getAttribute("data-ceilings")).toBe("3");
    expect(await chart.getAttribute("data-slopes")).toBe("2");
    expect(await page.locator("#chart-roofline canvas").count()).toBeGreaterThan(0);
    expect(await page.locator("#roofline-launch option").allTextContents()).toEqual(["#1 gemm"]);
    // The chart holds the series the page drew: 5 lines and 3 points.
    const drawn = await page.evaluate(() => {
      const option = window.kbWeb?.charts.get("chart-roofline")?.getOption() as
        | { series: { type: string; name: string }[] }
        | undefined;
      return option?.series.map((series) => `${series.type} ${series.name}`) ?? [];
    });
    expect(drawn.filter((name) => name.startsWith("scatter "))).toEqual([
      "scatter actual HBM traffic",
      "scatter minimal HBM traffic",
      "scatter busiest link",
    ]);
    expect(drawn).toContainEqual(expect.stringMatching(/^line PE_GEMM i8 \d/));
    expect(drawn).toContainEqual(expect.stringMatching(/^line HBM \d/));

    const compared = page.locator("#compare-roofline");
    expect(await compared.getAttribute("data-points")).toBe("6");
    // Both ran on default.yaml's engines and stacks: the ceilings and the HBM slope are drawn once.
    expect(await compared.getAttribute("data-ceilings")).toBe("3");
    expect(await page.locator("#compare-roofline-launch option").allTextContents()).toEqual(["#1 gemm"]);

    mkdirSync(ARTIFACTS, { recursive: true });
    for (const [id, file] of [
      ["#roofline", "kb-web-roofline.png"],
      ["#compare-roofline-wrap", "kb-web-compare-roofline.png"],
    ] as const) {
      await page.locator(id).scrollIntoViewIfNeeded();
      const path = join(ARTIFACTS, file);
      await page.locator(id).screenshot({ path });
      expect(readFileSync(path).subarray(1, 4).toString()).toBe("PNG");
    }
    expect(problems).toEqual([]);
    await page.close();
  }, 120_000);
});
