import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { WebData } from "@kb/web-ui/api";
import {
  loadSweepSource,
  pointTopologyFile,
  readSweepTable,
  readWebInput,
  startWebServer,
  sweepTableIn,
  type WebServer,
} from "@kb/web-ui/server";
import type { SweepData } from "@kb/web-ui/sweep-api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { topologyLookup } from "./bench-files.js";
import { kb } from "./test-support.js";
import { haveBuiltKb, runSmallSweep, type SmallSweep } from "./web-sweep-support.js";

// kb web of a sweep's results.jsonl: the server's /api/sweep and /api/data?run=, on a real sweep
// run with a results cache (see web-sweep-support.ts), and how a bad table is reported.

const scratch = mkdtempSync(join(tmpdir(), "kb-web-sweep-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A page directory with both pages, told apart by their titles. */
function pageDir(): string {
  const dir = join(scratch, "page");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "index.html"), "<title>run page</title>");
  writeFileSync(join(dir, "sweep.html"), "<title>sweep page</title>");
  return dir;
}

async function get(server: WebServer, path: string): Promise<{ status: number; body: string }> {
  const response = await fetch(new URL(path, server.url));
  return { status: response.status, body: await response.text() };
}

describe("reading a sweep's table", () => {
  const row = (point: number, key: string) =>
    JSON.stringify({
      point,
      key,
      status: "ok",
      reason: null,
      digest: null,
      values: { n: point },
      metrics: { time: point * 10 },
    });

  it("keeps the last row of a point key and drops a last line cut short, with a warning", async () => {
    const file = join(scratch, "resumed.jsonl");
    writeFileSync(file, `${row(0, "a")}\n${row(1, "b")}\n${row(7, "a")}\n{"point":2,"ke`);
    const { rows, warnings } = await readSweepTable(file);
    expect(rows.map((read) => [read.key, read.point])).toEqual([
      ["a", 7],
      ["b", 1],
    ]);
    expect(warnings).toEqual([expect.stringContaining(`${file}:4: a last line cut short`)]);
  });

  it("names the file and line of a line that is not a row", async () => {
    const file = join(scratch, "bad.jsonl");
    writeFileSync(file, `${row(0, "a")}\n{"point":1,"key":"b","status":"maybe"}\n${row(2, "c")}\n`);
    await expect(readSweepTable(file)).rejects.toThrow(
      `${file}:2: not a row of a sweep's results table (status:`,
    );
  });

  it("tells a sweep table by its extension or its first line, and wants it alone", async () => {
    const jsonl = join(scratch, "rows.txt");
    writeFileSync(jsonl, `${row(0, "a")}\n`);
    const results = join(scratch, "results.json");
    writeFileSync(results, '{\n  "schema": "kb.results/1"\n}\n');
    expect(await sweepTableIn([jsonl])).toBe(jsonl);
    expect(await sweepTableIn([join(scratch, "missing.jsonl")])).toBe(join(scratch, "missing.jsonl"));
    expect(await sweepTableIn([results])).toBeNull();
    await expect(sweepTableIn([results, jsonl])).rejects.toThrow("kb web shows a sweep on its own");
  });

  it("kb web --cache without a sweep's table is a usage error", async () => {
    const run = await kb("web", join(scratch, "results.json"), "--cache", scratch, "--port", "0");
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("--cache opens the runs of a sweep's points");
  });
});

describe.skipIf(!haveBuiltKb)("kb web of a sweep run with --cache", () => {
  let sweep: SmallSweep;
  let server: WebServer | null = null;
  let uncached: WebServer | null = null;

  beforeAll(async () => {
    sweep = await runSmallSweep(join(scratch, "copy"));
    const pages = pageDir();
    server = await startWebServer({
      sweep: await loadSweepSource(sweep.table, { topologies: topologyLookup, cacheDir: sweep.cache }),
      pageDir: pages,
      port: 0,
    });
    uncached = await startWebServer({
      sweep: await loadSweepSource(sweep.table, { topologies: topologyLookup }),
      pageDir: pages,
      port: 0,
    });
  }, 120_000);

  afterAll(async () => {
    await server?.close();
    await uncached?.close();
  });

  it("/api/sweep answers every row of the table, the axes, the metrics and which runs are cached", async () => {
    const answer = await get(server as WebServer, "/api/sweep");
    expect(answer.status).toBe(200);
    const data = JSON.parse(answer.body) as SweepData;
    expect(data.schema).toBe("kb.sweep-web/1");
    expect(data.axes).toEqual(["rows", "dtype"]);
    expect(data.metrics).toEqual(["time_ns", "hbm_bw", "hbm_bytes"]);
    expect(data.cacheDir).toBe(sweep.cache);
    const table = readFileSync(sweep.table, "utf8").trim().split("\n");
    expect(data.rows.map(({ cached, ...row }) => JSON.stringify(row))).toEqual(table);
    // The four ok points ran with --cache: their results are there; the f64 points failed.
    const byPoint = [...data.rows].sort((a, b) => a.point - b.point);
    expect(byPoint.map((row) => `${row.point} ${row.values.dtype} ${row.status} ${row.cached}`)).toEqual([
      "0 f16 ok true",
      "1 f32 ok true",
      "2 f64 failed false",
      "3 f16 ok true",
      "4 f32 ok true",
      "5 f64 failed false",
    ]);
    // A copy of rows x 64 elements: hbm bytes grow with rows and with the dtype's size (f32 = 2 x f16).
    expect((byPoint[1]?.metrics.hbm_bytes as number) / (byPoint[0]?.metrics.hbm_bytes as number)).toBe(2);
    expect((byPoint[3]?.metrics.hbm_bytes as number) / (byPoint[0]?.metrics.hbm_bytes as number)).toBe(8);
  });

  it("/api/data?run=DIGEST answers the cached run of a point, on the point's own topology", async () => {
    const data = JSON.parse((await get(server as WebServer, "/api/sweep")).body) as SweepData;
    const point = data.rows.find((row) => row.point === 3);
    const answer = await get(server as WebServer, `/api/data?run=${point?.digest}`);
    expect(answer.status).toBe(200);
    const run = JSON.parse(answer.body) as WebData;
    expect(run.schema).toBe("kb.web/1");
    expect(run.results).toHaveLength(1);
    expect(run.results[0]?.label).toBe("point 3");
    expect(run.results[0]?.results.params).toMatchObject({ rows: 256, dtype: "f16" });
    expect(run.results[0]?.results.manifest?.digest).toBe(point?.digest);
    expect(run.topology.file).toBe(pointTopologyFile(sweep.table, point?.key ?? ""));
    expect(run.topology.name).toBe("default");
    expect(run.warnings).toEqual([]);
  });

  it("fault: shows a cached run only when its sha256 holds (kb run --cache's entries)", async () => {
    const data = JSON.parse((await get(server as WebServer, "/api/sweep")).body) as SweepData;
    const digest = data.rows.find((row) => row.point === 3)?.digest ?? "";
    const entry = readFileSync(join(sweep.cache, `${digest}.json`), "utf8");
    const good = join(scratch, "entry.json");
    writeFileSync(good, entry);
    const read = await readWebInput(good, "point 3", 2 ** 30);
    expect(read.kind === "results" && read.results.manifest?.digest).toBe(digest);
    // One figure edited by hand: the entry no longer hashes to its sha256.
    const edited = join(scratch, "edited.json");
    writeFileSync(edited, entry.replace(/"simTimeNs": (\d)/, '"simTimeNs": 9$1'));
    await expect(readWebInput(edited, "point 3", 2 ** 30)).rejects.toThrow(
      "a results cache entry whose results do not match their sha256 (edited or damaged)",
    );
  });

  it("serves the sweep page at / and the run page at /?run=", async () => {
    expect((await get(server as WebServer, "/")).body).toContain("sweep page");
    expect((await get(server as WebServer, `/?run=${"0".repeat(64)}`)).body).toContain("run page");
  });

  it("says why a run does not open: not a digest, not cached, no --cache", async () => {
    const data = JSON.parse((await get(server as WebServer, "/api/sweep")).body) as SweepData;
    const digest = data.rows.find((row) => row.status === "ok")?.digest ?? "";
    expect(await get(server as WebServer, "/api/data?run=../etc")).toMatchObject({ status: 400 });
    const unknown = await get(server as WebServer, `/api/data?run=${"ab".repeat(32)}`);
    expect(unknown.status).toBe(404);
    expect(unknown.body).toContain(`${sweep.cache} has no ${"ab".repeat(32)}.json`);
    const noCache = await get(uncached as WebServer, `/api/data?run=${digest}`);
    expect(noCache.status).toBe(404);
    expect(noCache.body).toContain("run kb web with --cache DIR");
    const rows = (JSON.parse((await get(uncached as WebServer, "/api/sweep")).body) as SweepData).rows;
    expect(rows.filter((row) => row.cached)).toEqual([]);
    expect((await get(uncached as WebServer, "/api/data")).status).toBe(404);
  });
});
