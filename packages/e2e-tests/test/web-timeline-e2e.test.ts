import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { kb } from "./cli-sources.js";
import { kbWebInChromium, openPage, repo, runBrowserTests, watchedPage } from "./web-e2e-support.js";

// End to end: kb run attention --json --trace, both files in kb web, the timeline in headless
// Chromium at 1400 x 900 (docs/reports.md, "Timeline"): a kernel line clicked in the source view
// filters it, its legend, labelled launch markers, track groups, search, hovering an idle spot,
// and "Open in Perfetto" handing over the very trace kb run wrote. Screenshots in
// apps/web/test-artifacts/kb-web-timeline-*.png.

const ARTIFACTS = repo("apps/web/test-artifacts");

interface TraceEvent {
  name: string;
  ph: string;
  pid: number;
  tid: number;
  args?: { name?: string; site?: string };
}

/** The chart's data attribute `name`. */
const chartData = (page: Page, name: string) => page.locator("#timeline-chart").getAttribute(`data-${name}`);

/** Waits until the chart's attribute `name` is `value` (the window is fetched after a short pause). */
async function until(page: Page, name: string, value: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while ((await chartData(page, name)) !== value) {
    if (Date.now() > deadline)
      throw new Error(`data-${name} stayed ${await chartData(page, name)}, expected ${value}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const file = join(ARTIFACTS, `kb-web-timeline-${name}.png`);
  await page.locator("#timeline").screenshot({ path: file });
  expect(readFileSync(file).subarray(1, 4).toString()).toBe("PNG");
}

describe.skipIf(!runBrowserTests)("kb web's timeline in headless Chromium", () => {
  let traceFile = "";
  let events: TraceEvent[] = [];
  let topLine = "";
  const served = kbWebInChromium("web-timeline-e2e", async (scratch) => {
    traceFile = join(scratch, "attention.trace.json");
    const run = await kb(
      "run",
      "attention",
      "--topology",
      repo("topologies/default.yaml"),
      "--json",
      "--trace",
      traceFile,
    );
    expect(run.stderr).toBe("");
    const results = JSON.parse(run.stdout) as { launches: { sites?: { lines: { line: string }[] } }[] };
    topLine = results.launches[0]?.sites?.lines[0]?.line ?? "";
    writeFileSync(join(scratch, "attention.json"), run.stdout);
    events = (JSON.parse(readFileSync(traceFile, "utf8")) as { traceEvents: TraceEvent[] }).traceEvents;
    return [join(scratch, "attention.json"), traceFile, "--topology", repo("topologies/default.yaml")];
  });

  /** Track names by pid:tid, and the slices (B events: kb run --trace closes every one). */
  const traceFacts = () => {
    const names = new Map(
      events
        .filter((e) => e.ph === "M" && e.name === "thread_name")
        .map((e) => [`${e.pid}:${e.tid}`, e.args?.name ?? ""]),
    );
    const slices = events
      .filter((e) => e.ph === "B")
      .map((e) => ({ ...e, track: names.get(`${e.pid}:${e.tid}`) ?? "" }));
    return { names, slices };
  };

  it("clicking a kernel line shows only its slices, on the tracks that ran them, with a chip naming it", async () => {
    const { browser, web } = served();
    const { page, problems } = await watchedPage(browser);
    expect(await openPage(page, web.server.url)).toBeNull();
    const { slices } = traceFacts();
    expect(Number(await chartData(page, "track-count"))).toBeGreaterThan(100);
    const ofLine = slices.filter((slice) => slice.args?.site === topLine);
    const tracksOfLine = new Set(ofLine.map((slice) => slice.track));
    expect(ofLine.length).toBeGreaterThan(0);

    const row = page.locator(`#source-view .source-line[data-site="${topLine}"]`);
    await row.scrollIntoViewIfNeeded();
    await row.click();
    await until(page, "filtered-slices", String(ofLine.length));
    expect(await chartData(page, "track-rows")).toBe(String(tracksOfLine.size));
    expect(await page.isVisible("#timeline-filter")).toBe(true);
    expect(await page.locator("#timeline-filter-text").textContent()).toBe(`line ${topLine}`);
    expect(await page.locator("#timeline-note").textContent()).toContain(
      `Filter line ${topLine}: ${ofLine.length} slices on ${tracksOfLine.size} tracks over the run.`,
    );
    await page.locator("#timeline").scrollIntoViewIfNeeded();
    await screenshot(page, "line");

    // The chip's clear button shows every slice again and unselects the line.
    await page.click("#timeline-filter-clear");
    await until(page, "filtered-slices", "");
    expect(await page.isVisible("#timeline-filter")).toBe(false);
    expect(await page.evaluate(() => window.kbWeb?.source?.selected)).toBeNull();
    // Clicking the line twice: filtered, then not.
    await row.click();
    await until(page, "filtered-slices", String(ofLine.length));
    await row.click();
    await until(page, "filtered-slices", "");
    expect(Number(await chartData(page, "track-rows"))).toBe(Number(await chartData(page, "track-count")));
    expect(problems).toEqual([]);
    await page.close();
  }, 120_000);

  it("has a legend of its colours, labelled launch markers, and groups that collapse", async () => {
    const { browser, web } = served();
    const { page, problems } = await watchedPage(browser);
    expect(await openPage(page, web.server.url)).toBeNull();
    // 2,133 slices, fewer than a window sends: drawn one by one.
    await until(page, "mode", "slices");
    const { slices } = traceFacts();
    // One legend entry per kind of the tracks with slices (the track's last name part, lanes and
    // numbers dropped; routers: noc).
    const kinds = new Set(
      slices.map(({ track: name }) => {
        const parts = name.replace(/#\d+$/, "").split(".");
        const last = parts[parts.length - 1] as string;
        return /^r\d+c\d+$/.test(last) ? (parts[parts.length - 2] as string) : last.replace(/\d+$/, "");
      }),
    );
    const legend = page.locator("#timeline-legend [data-kind]");
    expect(await legend.count()).toBe(kinds.size);
    const colours = await legend
      .locator(".swatch")
      .evaluateAll((swatches) => swatches.map((swatch) => (swatch as HTMLElement).style.background));
    expect(new Set(colours).size).toBe(kinds.size);

    // One launch: its start and end markers, both labelled at this width.
    expect(await chartData(page, "mark-labels")).toBe("2");
    const launch = events.find((e) => e.ph === "i" && e.name === "launch: attention") as unknown as {
      ts: number;
    };
    const endNs = Number(await chartData(page, "to-ns"));
    const strip = page.locator("#timeline-chart canvas.timeline-marks");
    const box = await strip.boundingBox();
    if (box === null) throw new Error("no marker strip");
    const plot = box.width - 220 - 12;
    await page.locator("#timeline").scrollIntoViewIfNeeded();
    const stripBox = (await strip.boundingBox()) ?? box;
    await page.mouse.move(stripBox.x + 220 + ((launch.ts * 1000) / endNs) * plot, stripBox.y + 8);
    expect(await page.locator(".timeline-tip").textContent()).toMatch(
      /^launch #1 attention: starts at [\d.]+ µs, ends at [\d.]+ µs \([\d.]+ µs\)$/,
    );
    await screenshot(page, "legend");

    // Grouped by cube: a header per trace process; collapsing one hides its tracks
    // (the processes of the tracks with slices: host has none in this run)
    const processes = new Set(slices.map((slice) => slice.pid));
    expect(await chartData(page, "group-count")).toBe(String(processes.size));
    const rows = await page.evaluate(() => window.kbWeb?.timeline?.rows ?? []);
    const first = rows[0] as unknown as { kind: string; key: string; tracks: number[] };
    expect(first.kind).toBe("group");
    const before = Number(await chartData(page, "row-count"));
    const canvas = page.locator("#timeline-chart .timeline-rows canvas");
    await canvas.click({ position: { x: 40, y: 7 } });
    expect(Number(await chartData(page, "row-count"))).toBe(before - first.tracks.length);
    expect(await page.evaluate(() => window.kbWeb?.timeline?.hoverText(40, 7))).toBe(
      `${first.key}: click to expand`,
    );
    await page.selectOption("#timeline-group", "kind");
    expect(await chartData(page, "group-count")).toBe(String(kinds.size));
    // Grouped by kind, collapsing hbm leaves its header alone: 32 rows fewer (two cubes x 16).
    const byKind = Number(await chartData(page, "row-count"));
    await page.evaluate(() => window.kbWeb?.timeline?.toggleGroup("hbm"));
    expect(Number(await chartData(page, "row-count"))).toBe(byKind - 32);
    await screenshot(page, "groups");
    expect(problems).toEqual([]);
    await page.close();
  }, 120_000);

  it("searches slice and track names; hovering an idle spot states the track's share of the window", async () => {
    const { browser, web } = served();
    const { page, problems } = await watchedPage(browser);
    expect(await openPage(page, web.server.url)).toBeNull();
    // 2,133 slices, fewer than a window sends: drawn one by one.
    await until(page, "mode", "slices");
    // Hovering where a track did nothing (pe0's pe_gemm before the launch, near the start):
    // no "0% busy", but its share of the window, here the whole run: the union of its slices over
    // the run's length, hand-summed from the trace below.
    const { slices } = traceFacts();
    const gemm = "sip0.cube0.pe0.pe_gemm";
    const row = await page.evaluate(
      (name) =>
        window.kbWeb?.timeline?.rows.findIndex(
          (each) =>
            each.kind === "track" && window.kbWeb?.timeline?.timeline.tracks[each.track]?.name === name,
        ) ?? -1,
      gemm,
    );
    expect(row).toBeGreaterThan(0);
    const idle = (await page.evaluate(
      ([y]) => window.kbWeb?.timeline?.hoverText(221, y as number),
      [row * 14 + 7],
    )) as string;
    expect(idle).not.toMatch(/\b0% busy/);
    const stated =
      /^sip0\.cube0\.pe0\.pe_gemm\nidle [\d.]+ ns … [\d.]+ ns\n([\d.]+)% busy over the shown window 0 ns … [\d.]+ µs$/.exec(
        idle,
      );
    expect(stated, idle).not.toBeNull();
    const all = events as (TraceEvent & { ts: number })[];
    const ids = all.filter((e) => e.ph === "M" && e.args?.name === gemm)[0] as TraceEvent;
    let busyUs = 0;
    let openAt = 0;
    for (const e of all) {
      if (e.pid !== ids.pid || e.tid !== ids.tid) continue;
      if (e.ph === "B") openAt = e.ts;
      if (e.ph === "E") busyUs += e.ts - openAt;
    }
    const endUs = Number(await chartData(page, "to-ns")) / 1000;
    expect(Math.abs(Number(stated?.[1]) - (busyUs / endUs) * 100)).toBeLessThan(1);

    const matches = slices.filter((slice) => slice.name.includes("gemm") || slice.track.includes("gemm"));
    expect(matches.length).toBeGreaterThan(0);
    await page.fill("#timeline-search", "GEMM");
    await until(page, "filtered-slices", String(matches.length));
    expect(await chartData(page, "track-rows")).toBe(
      String(new Set(matches.map((slice) => slice.track)).size),
    );
    expect(await page.locator("#timeline-filter-text").textContent()).toBe('matching "GEMM"');
    await page.locator("#timeline").scrollIntoViewIfNeeded();
    await screenshot(page, "search");
    expect(problems).toEqual([]);
    await page.close();
  }, 120_000);

  it("Open in Perfetto fetches the trace kb run wrote and posts it to the window it opened", async () => {
    const { browser, web } = served();
    const { page, problems } = await watchedPage(browser);
    expect(await openPage(page, web.server.url)).toBeNull();
    // ui.perfetto.dev is out of reach: window.open returns a stand-in that answers PING with PONG
    // (from Perfetto's origin, as the UI does) and keeps what it is sent.
    await page.evaluate(() => {
      const sent: unknown[] = [];
      const opened: string[] = [];
      (window as unknown as { perfettoStub: unknown }).perfettoStub = { sent, opened };
      window.open = ((url: string) => {
        opened.push(url);
        return {
          postMessage(message: unknown) {
            sent.push(message);
            if (message === "PING")
              window.dispatchEvent(
                new MessageEvent("message", { data: "PONG", origin: "https://ui.perfetto.dev" }),
              );
          },
        };
      }) as unknown as typeof window.open;
    });
    await page.click("#timeline-perfetto");
    const deadline = Date.now() + 20_000;
    while (!((await page.locator("#perfetto-status").textContent()) ?? "").startsWith("Handed")) {
      if (Date.now() > deadline)
        throw new Error(`status: ${await page.locator("#perfetto-status").textContent()}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const posted = await page.evaluate(async () => {
      const stub = (window as unknown as { perfettoStub: { sent: unknown[]; opened: string[] } })
        .perfettoStub;
      const last = stub.sent[stub.sent.length - 1] as { perfetto: { buffer: ArrayBuffer; title: string } };
      const digest = await crypto.subtle.digest("SHA-256", last.perfetto.buffer);
      return {
        opened: stub.opened,
        pings: stub.sent.filter((message) => message === "PING").length,
        title: last.perfetto.title,
        bytes: last.perfetto.buffer.byteLength,
        sha256: [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, "0")).join(""),
      };
    });
    const file = readFileSync(traceFile);
    expect(posted).toEqual({
      opened: ["https://ui.perfetto.dev"],
      pings: 1,
      title: "attention.trace.json",
      bytes: file.length,
      sha256: createHash("sha256").update(file).digest("hex"),
    });
    expect(await page.locator("#perfetto-status").textContent()).toBe(
      `Handed attention.trace.json (${file.length} bytes) to ui.perfetto.dev.`,
    );
    await screenshot(page, "perfetto");
    expect(problems).toEqual([]);
    await page.close();
  }, 120_000);
});
