import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { SweepRow } from "@kb/sweep";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { haveBuiltKb, runSmallSweep, type SmallSweep } from "./cli-sources.js";
import {
  launchChromium,
  openPage,
  type RunningWeb,
  repo,
  runBrowserTests,
  startKbWeb,
  watchedPage,
} from "./web-e2e-support.js";

// End to end: kb sweep runs six points with a results cache (four ok, two failed: see
// web-sweep-support.ts), kb web serves its results.jsonl with --cache, Chromium draws the sweep
// page, and a click on a point of the scatter opens that point's run page in a new tab.

const ARTIFACTS = repo("apps/web/test-artifacts");

/** The ok points no other ok point matches or beats in both (the definition, point by point). */
function frontByDefinition(
  rows: readonly SweepRow[],
  x: string,
  y: string,
  better: [number, number],
): number[] {
  const ok = rows.filter((row) => row.status === "ok");
  const value = (row: SweepRow, name: string) => row.metrics[name] as number;
  const beats = (a: SweepRow, b: SweepRow) => {
    const dx = (value(b, x) - value(a, x)) * better[0];
    const dy = (value(b, y) - value(a, y)) * better[1];
    return dx >= 0 && dy >= 0 && (dx > 0 || dy > 0);
  };
  return ok
    .filter((row) => !ok.some((other) => beats(other, row)))
    .map((row) => row.point)
    .sort((a, b) => a - b);
}

describe.skipIf(!runBrowserTests || !haveBuiltKb)("kb web of a sweep in headless Chromium", () => {
  const scratch = mkdtempSync(join(tmpdir(), "kb-web-sweep-e2e-"));
  let browser: Browser | null = null;
  let web: RunningWeb | null = null;
  let sweep: SmallSweep;
  let rows: SweepRow[] = [];

  beforeAll(async () => {
    sweep = await runSmallSweep(scratch);
    rows = readFileSync(sweep.table, "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as SweepRow);
    web = await startKbWeb([sweep.table, "--cache", sweep.cache]);
    browser = await launchChromium();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await web?.stop();
    rmSync(scratch, { recursive: true, force: true });
  });

  it("shows the table, the scatter with its front and the parallel coordinates; a click opens the run", async () => {
    expect(web?.output()).toContain("6 points (4 ok, 2 failed), 2 axes, 3 metrics; 4 with results in");
    const { page, problems } = await watchedPage(browser as Browser);
    expect(await openPage(page, web?.server.url ?? "")).toBeNull();

    // The table: a row per point, the failed ones with their reason; sorted by a column on a click.
    expect(await page.locator("#sweep-table tbody tr").count()).toBe(6);
    expect(await page.locator("#sweep-table tbody tr.failed").count()).toBe(2);
    expect(await page.locator('#sweep-table tr[data-point="2"]').textContent()).toContain("bad params");
    await page.locator('#sweep-table th[data-column="metric:hbm_bytes"]').click();
    await page.locator('#sweep-table th[data-column="metric:hbm_bytes"]').click();
    // Descending: 256 rows of f32 move the most bytes; the failed points (no bytes) last.
    const order = await page
      .locator("#sweep-table tbody tr")
      .evaluateAll((trs) => trs.map((tr) => (tr as HTMLElement).dataset.point));
    expect(order).toEqual(["4", "3", "1", "0", "2", "5"]);

    // The scatter: the first two metrics (time_ns: minimise, hbm_bw: maximise), the 4 ok points.
    const scatter = () =>
      page.evaluate(() => {
        const handle = window.kbSweep;
        const series = handle?.scatter?.getOption().series as { data: unknown[] }[] | undefined;
        return {
          x: handle?.x,
          y: handle?.y,
          front: handle?.model?.front.map((point) => point.row.point).sort((a, b) => a - b),
          drawnFront: series?.[1]?.data.length,
          drawnOthers: series?.[2]?.data.length,
          left: document.getElementById("scatter-left-out")?.textContent,
        };
      });
    const first = await scatter();
    expect(first).toMatchObject({ x: "time_ns", y: "hbm_bw" });
    expect((first.drawnFront ?? 0) + (first.drawnOthers ?? 0)).toBe(4);
    expect(first.front).toEqual(frontByDefinition(rows, "time_ns", "hbm_bw", [-1, 1]));
    expect(first.drawnFront).toBe(first.front?.length);
    expect(first.left).toContain("point 2 failed (not on the front)");
    // Against the bytes moved (minimise both): the smallest copy, 32 x 64 f16, moves the fewest
    // bytes in the least time, so it alone is the front.
    await page.selectOption("#scatter-y", "hbm_bytes");
    expect(await page.locator("#direction-y").inputValue()).toBe("min");
    const second = await scatter();
    expect(second.front).toEqual([0]);
    expect(second).toMatchObject({ drawnFront: 1, drawnOthers: 3 });

    // A log scale on y: offered (every value > 0), off at first (less than three decades), on
    // when ticked; the front stays the same.
    const yAxisType = () =>
      page.evaluate(
        () => (window.kbSweep?.scatter?.getOption().yAxis as { type: string }[] | undefined)?.[0]?.type,
      );
    expect(await page.locator("#log-y").isDisabled()).toBe(false);
    expect(await page.locator("#log-y").isChecked()).toBe(false);
    expect(await yAxisType()).toBe("value");
    await page.locator("#log-y").check();
    expect(await yAxisType()).toBe("log");
    expect((await scatter()).front).toEqual([0]);
    await page.locator("#log-y").uncheck();

    // Parallel coordinates: the axes (dtype a category) then the metrics; a line per ok point.
    const parallel = await page.evaluate(() => {
      const option = window.kbSweep?.parallel?.getOption() as
        | { parallelAxis: { name: string; type: string }[]; series: { data: unknown[] }[] }
        | undefined;
      return {
        axes: option?.parallelAxis.map((axis) => `${axis.name}:${axis.type}`),
        lines: option?.series.map((series) => series.data.length),
      };
    });
    // Metrics by their names for people: words and the unit their last word names.
    expect(parallel.axes).toEqual([
      "rows:value",
      "dtype:category",
      "time (ns):value",
      "hbm bw:value",
      "hbm bytes (B):value",
    ]);
    expect(parallel.lines).toEqual([3, 1]);
    expect(await page.locator('#sweep-table th[data-column="metric:time_ns"]').textContent()).toBe(
      "time (ns)",
    );
    expect(await page.locator("#scatter-x option:checked").textContent()).toBe("time (ns)");

    // Coloured by an axis: a colour per dtype of the ok points (f16, f32) in the legend, every
    // point its dtype's colour, the front's points ringed in red.
    await page.selectOption("#scatter-colour", "dtype");
    const coloured = await page.evaluate(() => {
      const series = window.kbSweep?.scatter?.getOption().series as
        | {
            data: {
              row: { values: { dtype: string } };
              itemStyle?: { color?: string; borderColor?: string };
            }[];
          }[]
        | undefined;
      const items = [...(series?.[1]?.data ?? []), ...(series?.[2]?.data ?? [])];
      return {
        legend: Array.from(document.querySelectorAll("#scatter-colour-legend li"), (li) => li.textContent),
        colours: items.map((item) => [item.row.values.dtype, item.itemStyle?.color] as const),
        rings: (series?.[1]?.data ?? []).map((item) => item.itemStyle?.borderColor),
      };
    });
    expect(coloured.legend).toEqual(["dtype = f16", "dtype = f32"]);
    const colourOf = new Map(coloured.colours);
    expect(coloured.colours).toHaveLength(4);
    for (const [dtype, colour] of coloured.colours) expect(colour).toBe(colourOf.get(dtype));
    expect(colourOf.get("f16")).not.toBe(colourOf.get("f32"));
    expect(coloured.rings.length).toBeGreaterThan(0);
    expect(new Set(coloured.rings)).toEqual(new Set(["#e15759"]));

    // The table as CSV, as kb sweep wrote results.csv beside results.jsonl.
    expect(await page.locator("#sweep-csv").getAttribute("download")).toBe("results.csv");
    const csv = await page.evaluate(async () => (await fetch("/api/sweep.csv")).text());
    expect(csv).toBe(readFileSync(join(dirname(sweep.table), "results.csv"), "utf8"));

    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, "kb-web-sweep.png"), fullPage: true });

    // A click on the front's point (point 0) opens its run page in a new tab.
    await page.locator("#scatter-chart").scrollIntoViewIfNeeded();
    const spot = await page.evaluate(() => {
      const handle = window.kbSweep;
      const point = handle?.model?.front[0];
      const pixel = handle?.scatter?.convertToPixel({ seriesIndex: 1 }, [point?.x ?? 0, point?.y ?? 0]) as
        | number[]
        | undefined;
      const box = document.getElementById("scatter-chart")?.getBoundingClientRect();
      return { x: (box?.left ?? 0) + (pixel?.[0] ?? 0), y: (box?.top ?? 0) + (pixel?.[1] ?? 0) };
    });
    const opened = page.context().waitForEvent("page");
    await page.mouse.click(spot.x, spot.y);
    const runPage = await opened;
    const digest = rows.find((row) => row.point === 0)?.digest;
    expect(runPage.url()).toBe(`${web?.server.url}?run=${digest}`);
    expect(await openPage(runPage, runPage.url())).toBeNull();
    expect(await runPage.evaluate(() => window.kbWeb?.data.results[0]?.label)).toBe("point 0");
    // The run page says which point it is and the axis values it ran with.
    expect(await runPage.locator("#sweep-point").textContent()).toBe(
      `This run is point 0 of ${sweep.table}: rows = 32, dtype = f16 (the sweep).`,
    );
    const summary = await runPage.locator("#summary-table").textContent();
    expect(summary).toContain("simulated time");
    expect(await runPage.locator("#topology-name").textContent()).toContain("default");
    await runPage.close();
    expect(problems).toEqual([]);
    await page.close();
  }, 120_000);
});
