import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { loadWebData } from "@kb/web-ui/server";
import { binCounter, timelineOfTrace } from "@kb/web-ui/trace-timeline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { topologyLookup } from "./bench-files.js";
import { kb } from "./test-support.js";

// A trace as kb web holds it: every slice, busy fractions of any window, counters over the whole
// run, gzip-compressed or not.

const repo = (path: string) => fileURLToPath(new URL(`../../../${path}`, import.meta.url));
const defaultYaml = repo("topologies/default.yaml");
const copyBench = fileURLToPath(new URL("__fixtures__/copy-bench.ts", import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), "kb-cli-web-timeline-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The busy bytes of a window (0..255 per track and column) as numbers. */
const bytes = (base64: string) => [...Buffer.from(base64, "base64")];

/** A trace in the form kb run --trace writes: the header line, one event per line, the footer. */
const kbTraceText = (events: readonly unknown[]) =>
  `{"traceEvents":[\n${events.map((event) => JSON.stringify(event)).join(",\n")}\n],"displayTimeUnit":"ns"}\n`;

describe("timelineOfTrace", () => {
  const events = [
    { name: "process_name", ph: "M", ts: 0, pid: 2, tid: 0, args: { name: "sip0.cube0" } },
    { name: "thread_name", ph: "M", ts: 0, pid: 2, tid: 5, args: { name: "sip0.cube0.xbar0" } },
    { name: "thread_name", ph: "M", ts: 0, pid: 2, tid: 3, args: { name: "sip0.cube0.hbm#1" } },
    { name: "a", ph: "B", ts: 0.5, pid: 2, tid: 5 },
    { name: "b", ph: "B", ts: 0.6, pid: 2, tid: 3 },
    { name: "b", ph: "E", ts: 0.7, pid: 2, tid: 3 },
    { name: "a", ph: "E", ts: 1.25, pid: 2, tid: 5 },
    { name: "launch: gemm", ph: "i", s: "t", ts: 0.1, pid: 2, tid: 5, cat: "launch" },
    { name: "command_submitted: x", ph: "i", s: "t", ts: 0.2, pid: 2, tid: 5, cat: "command_submitted" },
    { name: "HBM GB/s", ph: "C", ts: 0.6, pid: 2, tid: 3, args: { value: 12.5 } },
    { name: "orphan", ph: "E", ts: 2, pid: 2, tid: 9 },
  ];

  it("pairs B/E into slices per track, in ns, tracks by process then name", () => {
    const { timeline, slices } = timelineOfTrace(events, "t.json");
    expect(timeline.tracks).toEqual([
      { name: "sip0.cube0.hbm#1", group: "sip0.cube0" },
      { name: "sip0.cube0.xbar0", group: "sip0.cube0" },
    ]);
    expect(timeline.totalSlices).toBe(2);
    expect(timeline.endNs).toBe(2000);
    expect(timeline.markers).toEqual([{ tNs: 100, label: "launch: gemm" }]);
    expect(timeline.counters).toEqual([{ name: "HBM GB/s", track: "sip0.cube0.hbm#1", points: [600, 12.5] }]);
    const window = slices.window(0, 2000, 4);
    // In start order, names indexed within the window.
    expect(window.slices).toEqual([1, 500, 1250, 0, 0, 600, 700, 1]);
    expect(window.names).toEqual(["a", "b"]);
    // 500 ns columns: hbm#1 busy 100 of 500 ns in column 1 (0.2 x 255 = 51); xbar0 all of
    // column 1, 250 ns of column 2 (0.5 x 255 = 127.5, rounded 128).
    expect(window.exact).toBe(false);
    expect(bytes(window.busy)).toEqual([0, 51, 0, 0, 0, 255, 128, 0]);
  });

  it("a window of many slices sends their busy fractions only; a later, narrower one the slices", () => {
    // Track "pe": 1000 slices of 10 ns every 20 ns; track "long" (shown first, by name): busy all the run.
    const many: unknown[] = [
      { name: "thread_name", ph: "M", pid: 1, tid: 1, args: { name: "pe" } },
      { name: "thread_name", ph: "M", pid: 1, tid: 2, args: { name: "long" } },
      { name: "whole", ph: "X", ts: 0, dur: 20, pid: 1, tid: 2 },
    ];
    for (let i = 0; i < 1000; i++)
      many.push({ name: `s${i}`, ph: "X", ts: i * 0.02, dur: 0.01, pid: 1, tid: 1 });
    const { slices } = timelineOfTrace(many, "many.json");
    const whole = slices.window(0, 20_000, 10, 100);
    expect(whole.sliceCount).toBe(1001);
    expect(whole.slices).toBeNull();
    // All of every column busy on "long", half on "pe" (0.5 x 255: 127 or 128 from the rounding
    // of the bins).
    const busy = bytes(whole.busy);
    expect(busy.slice(0, 10)).toEqual(Array(10).fill(255));
    expect(busy.slice(10).every((value) => value === 127 || value === 128)).toBe(true);
    const late = slices.window(19_000, 20_000, 10, 100);
    // Slices 950..999, and the long one that covers the whole run.
    expect(late.sliceCount).toBe(51);
    expect(late.slices?.slice(0, 4)).toEqual([0, 0, 20_000, 0]);
    expect(late.slices?.slice(4, 8)).toEqual([1, 19_000, 19_010, 1]);
    expect(late.names.slice(0, 2)).toEqual(["whole", "s950"]);
    expect(bytes(late.busy).slice(0, 10)).toEqual(Array(10).fill(255));
    // Columns of 2 ns, narrower than the finest bins (20 µs / 8192): from the slices themselves.
    const narrow = slices.window(19_000, 19_020, 10, 100);
    expect(narrow.exact).toBe(true);
    expect(bytes(narrow.busy)).toEqual([...Array(10).fill(255), ...Array(5).fill(255), ...Array(5).fill(0)]);
  });

  it("overlapping slices of a track count once; a zero-length slice still marks its column", () => {
    const { slices } = timelineOfTrace(
      [
        { name: "a", ph: "X", ts: 0, dur: 0.1, pid: 1, tid: 1 },
        { name: "b", ph: "X", ts: 0.05, dur: 0.1, pid: 1, tid: 1 },
        { name: "c", ph: "X", ts: 0.25, dur: 0, pid: 1, tid: 1 },
        { name: "d", ph: "X", ts: 0.3, dur: 0.1, pid: 1, tid: 1 },
      ],
      "overlap.json",
    );
    // 100 ns columns: [0, 150) busy once, c at 250 has no length, d fills the last column.
    expect(bytes(slices.window(0, 400, 4).busy)).toEqual([255, 128, 1, 255]);
    expect(bytes(slices.window(0, 400, 4, 0).busy)).toEqual([255, 128, 1, 255]);
  });
});

describe("counters over the whole run", () => {
  it("bins a counter into time-weighted means, a sample holding until the next one, at most holdNs", () => {
    expect(binCounter([0, 10, 500, 20], 250, 4, 1000)).toEqual([10, 10, 20, 20]);
    expect(binCounter([0, 10, 500, 20], 250, 4, 100)).toEqual([4, 0, 8, 0]);
  });
});

describe("reading traces", () => {
  let traceFile = "";
  beforeAll(async () => {
    traceFile = join(scratch, "copy.trace.json");
    const run = await kb("run", copyBench, "--topology", defaultYaml, "--trace", traceFile);
    expect(run.code).toBe(0);
  });

  it("reads what kb run --trace writes, line by line, as the whole JSON would read", async () => {
    const text = readFileSync(traceFile, "utf8");
    expect(text.startsWith('{"traceEvents":[\n')).toBe(true);
    const trace = JSON.parse(text) as { traceEvents: unknown[] };
    const whole = timelineOfTrace(trace.traceEvents, traceFile, "copy.trace.json");
    const { data, slices } = await loadWebData([traceFile], {
      topologies: topologyLookup,
      topology: defaultYaml,
    });
    expect(data.timelines[0]).toEqual(whole.timeline);
    const begins = trace.traceEvents.filter((event) => (event as { ph: string }).ph === "B").length;
    expect(whole.timeline.totalSlices).toBe(begins);
    expect(slices[0]?.size).toBe(begins);
    expect(whole.timeline.tracks.some((track) => track.name === "sip0.cube0.pe0.pe_dma#0")).toBe(true);
    // Lanes count up (numbers compared as numbers), a PE's components sit together.
    const names = whole.timeline.tracks.map((track) => track.name);
    const lanes = names.filter((name) => name.startsWith("sip0.cube0.hbm#"));
    expect(lanes).toEqual(Array.from({ length: lanes.length }, (_, lane) => `sip0.cube0.hbm#${lane}`));
    const pe0 = names.filter((name) => name.startsWith("sip0.cube0.pe0."));
    expect(
      names.slice(names.indexOf(pe0[0] as string), names.indexOf(pe0[0] as string) + pe0.length),
    ).toEqual(pe0);
    expect(whole.timeline.markers.map((marker) => marker.label)).toContain("launch: copy");
  });

  it("reads a gzip-compressed trace (kb run --trace out.json.gz) as the plain one", async () => {
    const gz = join(scratch, "copy.trace.json.gz");
    writeFileSync(gz, gzipSync(readFileSync(traceFile)));
    expect(readFileSync(gz).subarray(0, 2)).toEqual(Buffer.from([0x1f, 0x8b]));
    const plain = await loadWebData([traceFile], { topologies: topologyLookup, topology: defaultYaml });
    const zipped = await loadWebData([gz], { topologies: topologyLookup, topology: defaultYaml });
    const {
      file: _a,
      label: _b,
      ...plainTimeline
    } = plain.data.timelines[0] as object as { file: string; label: string };
    const { file, label, ...zippedTimeline } = zipped.data.timelines[0] as object as {
      file: string;
      label: string;
    };
    expect(label).toBe("copy.trace.json.gz");
    expect(file).toBe(gz);
    expect(zippedTimeline).toEqual(plainTimeline);
    const end = plain.data.timelines[0]?.endNs ?? 0;
    expect(zipped.slices[0]?.window(0, end, 64)).toEqual(plain.slices[0]?.window(0, end, 64));
  });

  it("a gzipped trace of another form (a bare array of events) reads too", async () => {
    const events = [{ name: "work", ph: "X", ts: 1, dur: 2, pid: 1, tid: 1 }];
    const gz = join(scratch, "array.json.gz");
    writeFileSync(gz, gzipSync(JSON.stringify(events)));
    const { slices } = await loadWebData([gz], { topologies: topologyLookup, topology: defaultYaml });
    expect(slices[0]?.window(0, 3000, 3).slices).toEqual([0, 1000, 3000, 0]);
  });

  it("a damaged gzip file is a usage error naming it", async () => {
    const gz = join(scratch, "cut.json.gz");
    writeFileSync(
      gz,
      gzipSync(kbTraceText([{ name: "a", ph: "X", ts: 0, dur: 1, pid: 1, tid: 1 }])).subarray(0, 20),
    );
    await expect(loadWebData([gz], { topologies: topologyLookup, topology: defaultYaml })).rejects.toThrow(
      /\[CLI_USAGE\] .*cut\.json\.gz: a gzip file that does not decompress .*Write it again with kb run --trace/,
    );
  });

  it("a kb-form trace with a bad event names the event", async () => {
    const bad = join(scratch, "bad-line.json");
    writeFileSync(
      bad,
      kbTraceText([
        { name: "a", ph: "X", ts: 0, dur: 1, pid: 1, tid: 1 },
        { ph: "B", pid: 1 },
      ]),
    );
    await expect(loadWebData([bad], { topologies: topologyLookup, topology: defaultYaml })).rejects.toThrow(
      /bad-line\.json:3: traceEvents\[1\] has no numeric ts, pid and tid/,
    );
  });
});
