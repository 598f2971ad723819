import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RunResults } from "@kb/runtime";
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

// End to end on a large run: kb run gemm 4096^3 on default.yaml writes a trace of about 595,000
// slices (about 10 s and 200 MB), kb web serves it, and headless Chromium shows the whole run:
// busy rows to its end, the slices of a late window once zoomed in (past where a cut at the first
// 200,000 slices would have stopped), the bottleneck lines, the legend and the HBM chart over the
// whole run.

const ARTIFACTS = repo("apps/web/test-artifacts");

describe.skipIf(!runBrowserTests)("kb web on a trace of more than 500,000 slices", () => {
  const scratch = mkdtempSync(join(tmpdir(), "kb-web-e2e-large-"));
  let browser: Browser | null = null;
  let web: RunningWeb | null = null;
  let results: RunResults | null = null;

  beforeAll(async () => {
    const trace = join(scratch, "gemm4k.trace.json");
    const run = await kb(
      "run",
      "gemm",
      "--param",
      "M=4096",
      "--param",
      "N=4096",
      "--param",
      "K=4096",
      "--topology",
      repo("topologies/default.yaml"),
      "--json",
      "--trace",
      trace,
    );
    expect(run.code).toBe(0);
    writeFileSync(join(scratch, "gemm4k.json"), run.stdout);
    results = JSON.parse(run.stdout) as RunResults;
    web = await startKbWeb([
      join(scratch, "gemm4k.json"),
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

  it("shows busy rows to the end of the run, a late window's slices, the verdicts, the legend and the HBM chart", async () => {
    const { page, problems } = await watchedPage(browser as Browser);
    try {
      expect(web?.output()).toMatch(/kb web: trace .*gemm4k\.trace\.json: \d+ tracks, [\d,]+ slices\n/);
      expect(await openPage(page, web?.server.url ?? "")).toBeNull();
      const timeline = page.locator("#timeline-chart");
      await expect.poll(() => timeline.getAttribute("data-mode"), { timeout: 30_000 }).toBe("busy");

      // (a) The whole run: every slice counted, busy rows up to the last pixel column.
      const whole = await page.evaluate(() => {
        const handle = window.kbWeb?.timeline;
        const shown = handle?.window;
        if (handle === undefined || handle === null || shown === null || shown === undefined) return null;
        const busy = Uint8Array.from(atob(shown.busy), (char) => char.charCodeAt(0));
        let lastColumn = -1;
        for (let track = 0; track < handle.timeline.tracks.length; track++) {
          for (let column = shown.width - 1; column > lastColumn; column--) {
            if ((busy[track * shown.width + column] as number) > 0) lastColumn = column;
          }
        }
        return {
          total: handle.timeline.totalSlices,
          endNs: handle.timeline.endNs,
          count: shown.sliceCount,
          slices: shown.slices,
          fromNs: shown.fromNs,
          toNs: shown.toNs,
          width: shown.width,
          lastColumn,
        };
      });
      expect(whole).not.toBeNull();
      const run = whole as NonNullable<typeof whole>;
      expect(run.total).toBeGreaterThan(500_000);
      expect(run.count).toBe(run.total);
      expect(run.slices).toBeNull();
      expect([run.fromNs, run.toNs]).toEqual([0, run.endNs]);
      expect(run.width).toBeGreaterThan(500);
      expect(run.lastColumn).toBe(run.width - 1);

      // (b) A late window: more than 200,000 slices start before it; zoomed in, its slices are drawn.
      const fromNs = run.endNs * 0.95;
      const before = await page.evaluate(async (to) => {
        const response = await fetch(`/api/timeline?trace=0&from=0&to=${to}&width=1`);
        return ((await response.json()) as { sliceCount: number }).sliceCount;
      }, fromNs);
      expect(before).toBeGreaterThan(200_000);
      const late = await page.evaluate(
        async ([from, to]) => {
          const shown = await window.kbWeb?.timeline?.setView(from as number, to as number);
          const slices = shown?.slices ?? [];
          let earliest = Number.POSITIVE_INFINITY;
          let latest = 0;
          for (let i = 0; i < slices.length; i += 4) {
            earliest = Math.min(earliest, slices[i + 2] as number);
            latest = Math.max(latest, slices[i + 1] as number);
          }
          return { count: shown?.sliceCount ?? 0, sent: slices.length / 4, earliest, latest };
        },
        [fromNs, fromNs + run.endNs / 1000],
      );
      expect(await timeline.getAttribute("data-mode")).toBe("slices");
      expect(late.sent).toBeGreaterThan(0);
      expect(late.sent).toBe(late.count);
      // Every slice sent overlaps the window.
      expect(late.earliest).toBeGreaterThanOrEqual(fromNs);
      expect(late.latest).toBeLessThan(fromNs + run.endNs / 1000);

      // The wheel over the rows zooms in around the pointer; a double-click shows the whole run again.
      const rows = page.locator("#timeline-chart .timeline-rows canvas");
      await rows.scrollIntoViewIfNeeded();
      const box = await rows.boundingBox();
      await page.mouse.move((box?.x ?? 0) + (box?.width ?? 0) * 0.9, (box?.y ?? 0) + 20);
      for (let i = 0; i < 10; i++) await page.mouse.wheel(0, -100);
      await expect
        .poll(async () => {
          const from = Number(await timeline.getAttribute("data-from-ns"));
          const to = Number(await timeline.getAttribute("data-to-ns"));
          return to - from < run.endNs * 0.2 && from > run.endNs * 0.5;
        })
        .toBe(true);
      await rows.dblclick({ position: { x: (box?.width ?? 0) * 0.9, y: 20 } });
      await expect.poll(() => timeline.getAttribute("data-to-ns")).toBe(String(run.endNs));
      expect(await timeline.getAttribute("data-from-ns")).toBe("0");

      // (c) A bottleneck line per launch, and the legend of components, channels and links.
      const launches = (results as RunResults).launches;
      const lines = await page.locator("#verdict-list li").allTextContents();
      expect(lines).toEqual(
        launches.map(
          (launch) =>
            `${launch.name}: ${launch.verdict?.text ?? "no verdict (results written before kb run reported bottlenecks)"}`,
        ),
      );
      expect(await page.locator('#diagram-legend [data-legend="nodes"]').textContent()).toMatch(
        /utilisation 0%.*100%: components.*HBM channels/,
      );
      expect(await page.locator('#diagram-legend [data-legend="links"]').textContent()).toContain("links");

      // (d) The HBM chart spans the whole run (every sample, or bins when there are more than 200,000).
      const hbm = await page.evaluate(() => {
        const option = window.kbWeb?.charts.get("chart-hbm-time")?.getOption() as
          | { series: { data: [number, number][] }[] }
          | undefined;
        const data = option?.series[0]?.data ?? [];
        return {
          first: data[0]?.[0],
          last: data[data.length - 1]?.[0],
          peak: Math.max(...data.map((p) => p[1])),
        };
      });
      expect(hbm.first).toBeLessThan(run.endNs * 0.01);
      expect(hbm.last).toBeGreaterThan(run.endNs * 0.99);
      expect(hbm.peak).toBeGreaterThan(0);
      expect(await page.locator("#hbm-note").textContent()).toMatch(
        /the whole run, 0 … .*(every sample|in bins of)/,
      );

      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: join(ARTIFACTS, "kb-web-large.png"), fullPage: true });
      expect(readFileSync(join(ARTIFACTS, "kb-web-large.png")).subarray(1, 4).toString()).toBe("PNG");
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  }, 120_000);
});
