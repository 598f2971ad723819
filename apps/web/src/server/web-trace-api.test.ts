import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { WebData, WebTimelineWindow } from "../api.js";
import { timelineOfTrace } from "../trace-timeline.js";
import { startWebServer, type WebServer } from "./web-server.js";

// kb web's server answers filtered timeline windows (`site`, `q`) and the trace files themselves
// (`/api/trace`, for "Open in Perfetto"), byte for byte.

const scratch = mkdtempSync(join(tmpdir(), "kb-web-trace-api-"));
const traceText = `${JSON.stringify({
  traceEvents: [
    { name: "thread_name", ph: "M", pid: 1, tid: 1, args: { name: "sip0.cube0.pe0.pe_dma#0" } },
    { name: "thread_name", ph: "M", pid: 1, tid: 2, args: { name: "sip0.cube0.pe0.pe_gemm" } },
    { name: "dma_read", ph: "X", ts: 0, dur: 0.25, pid: 1, tid: 1, args: { site: "k.ts:3" } },
    { name: "gemm", ph: "X", ts: 0.25, dur: 0.5, pid: 1, tid: 2, args: { site: "k.ts:4" } },
  ],
})}\n`;
let server: WebServer;

beforeAll(async () => {
  const file = join(scratch, "run.trace.json");
  writeFileSync(file, traceText);
  writeFileSync(join(scratch, "index.html"), "<!doctype html>");
  const { timeline, slices } = timelineOfTrace(
    (JSON.parse(traceText) as { traceEvents: unknown[] }).traceEvents,
    file,
  );
  const data: WebData = {
    schema: "kb.web/1",
    topology: { file: "t.yaml", name: "t", nodes: [], edges: [] },
    results: [],
    timelines: [timeline],
    warnings: [],
  };
  server = await startWebServer({ data, slices: [slices], pageDir: scratch, port: 0 });
});
afterAll(async () => {
  await server.close();
  rmSync(scratch, { recursive: true, force: true });
});

describe("kb web's trace API", () => {
  it("GET /api/trace?trace=0 sends the trace file as given; a bad or missing number is 400 or 404", async () => {
    const response = await fetch(`${server.url}api/trace?trace=0`);
    expect(response.status).toBe(200);
    expect(Buffer.from(await response.arrayBuffer()).toString("utf8")).toBe(traceText);
    expect((await fetch(`${server.url}api/trace?trace=1`)).status).toBe(404);
    const bad = await fetch(`${server.url}api/trace`);
    expect(bad.status).toBe(400);
    expect(await bad.text()).toBe("/api/trace needs the number of a trace: /api/trace?trace=0\n");
  });

  it("GET /api/timeline with site= keeps the slices of that kernel line", async () => {
    const response = await fetch(`${server.url}api/timeline?trace=0&from=0&to=750&width=3&site=k.ts%3A4`);
    const window = (await response.json()) as WebTimelineWindow;
    // 250 ns columns; gemm (k.ts:4) on track 1 from 250 to 750 ns. Busy bytes come from the
    // filtered slices' own bins (8,192 over the run, not aligned with the columns: the column
    // before gemm's start gets a sliver): track 0's dma_read (k.ts:3) counts nowhere.
    expect(window.slices).toEqual([1, 250, 750, 0]);
    const busy = [...Buffer.from(window.busy, "base64")];
    expect(busy.slice(0, 3)).toEqual([0, 0, 0]);
    expect(busy[3]).toBeLessThan(5);
    expect(busy.slice(4).every((value) => value >= 250)).toBe(true);
    expect(window.filtered).toEqual({ site: "k.ts:4", slices: 1, tracks: [1] });
    const search = (await (
      await fetch(`${server.url}api/timeline?trace=0&from=0&to=750&width=3&q=DMA`)
    ).json()) as WebTimelineWindow;
    expect(search.filtered).toEqual({ search: "DMA", slices: 1, tracks: [0] });
  });
});
