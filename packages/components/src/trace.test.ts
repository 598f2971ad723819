import { encodeAddress } from "@kb/topology";
import { expect, it } from "vitest";
import { machineOf } from "./test-support.js";
import { type ChromeTraceEvent, TraceRecorder } from "./trace.js";

const hbm = (offset: number) => encodeAddress({ sip: 0, cube: 0, space: "hbm", offset });

it("exports Chrome trace-event JSON: a track per component, matched B/E slices, monotonic time per track", () => {
  const tracer = traceOfGemm();
  const trace = tracer.toChromeTrace();
  expect(trace.displayTimeUnit).toBe("ns");
  const names = new Map<number, string>();
  const processes = new Map<number, string>();
  for (const event of trace.traceEvents) {
    if (event.ph === "M" && event.name === "thread_name") names.set(event.tid, String(event.args?.name));
    if (event.ph === "M" && event.name === "process_name") processes.set(event.pid, String(event.args?.name));
  }
  // One thread per component that did something; its process is its cube.
  expect([...names.values()]).toContain("sip0.cube0.pe1.pe_gemm");
  expect([...names.values()]).toContain("sip0.cube0.xbar0");
  expect(new Set(names.values()).size).toBe(names.size);
  expect([...processes.values()]).toEqual(["sip0.cube0"]);
  // Slices in file order per track (B/E pair up by order); a counter's points in time order (a
  // sampled change is added when its interval elapses, after later slices of its track: Perfetto
  // sorts JSON events by time).
  const byTrack = new Map<string, ChromeTraceEvent[]>();
  for (const event of trace.traceEvents.filter((e) => e.ph !== "M")) {
    const key = event.ph === "C" ? `${event.tid} ${event.name}` : `${event.tid}`;
    const list = byTrack.get(key) ?? [];
    list.push(event);
    byTrack.set(key, list);
  }
  for (const [key, events] of byTrack) {
    let depth = 0;
    let last = -1;
    const tid = Number.parseInt(key, 10);
    for (const event of events) {
      expect(event.ts, `track ${names.get(tid)} (${key})`).toBeGreaterThanOrEqual(last);
      last = event.ts;
      if (event.ph === "B") depth++;
      if (event.ph === "E") depth--;
      expect(depth).toBeGreaterThanOrEqual(0);
    }
    expect(depth, `unmatched slices on ${names.get(tid)}`).toBe(0);
  }
  // ADR-0014 D6 events are all present.
  const kinds = new Set(tracer.events.map((event) => event.type));
  for (const type of [
    "command_submitted",
    "sub_command_dispatched",
    "engine_start",
    "engine_complete",
    "tile_ready",
    "command_complete",
  ]) {
    expect(kinds.has(type as never), type).toBe(true);
  }
  // 2 x 2 output tiles x 2 K tiles = 8 tiles, each dispatched and ready once.
  expect(tracer.events.filter((event) => event.type === "tile_ready")).toHaveLength(8);
  expect(tracer.events.filter((event) => event.type === "sub_command_dispatched")).toHaveLength(8);
  expect(JSON.parse(JSON.stringify(trace))).toEqual(trace);
});

function traceOfGemm(tracer = new TraceRecorder()): TraceRecorder {
  const machine = machineOf("default", { tracer });
  machine.run(
    machine.submit("sip0.cube0.pe1", [
      {
        kind: "composite_gemm",
        a: hbm(0),
        b: hbm(1 << 20),
        c: hbm(2 << 20),
        m: 64,
        n: 64,
        k: 128,
        dtype: "f16",
        tile: { m: 32, n: 32, k: 64 },
      },
    ]),
  );
  return tracer;
}

it("flow arrows follow each tile through its stages; counters sample queue depth and HBM bandwidth", () => {
  const trace = traceOfGemm().toChromeTrace();
  const flows = trace.traceEvents.filter((event) => event.ph === "s" || event.ph === "t");
  // 8 tiles: each starts one flow (at its DMA_READ) and steps through FETCH, GEMM, STORE (and the
  // last K tile's DMA_WRITE): 8 x 4 + 4 output tiles' writes = 36 steps.
  expect(flows.filter((event) => event.ph === "s")).toHaveLength(8);
  expect(flows.filter((event) => event.ph === "t")).toHaveLength(8 * 3 + 4);
  const ids = new Set<number>();
  for (const event of flows) {
    if (event.ph === "s") {
      expect(ids.has(event.id as number)).toBe(false);
      ids.add(event.id as number);
    } else {
      expect(ids.has(event.id as number), "a step after its start").toBe(true);
    }
    expect(event.bp).toBe("e");
  }
  const counters = trace.traceEvents.filter((event) => event.ph === "C");
  expect(new Set(counters.map((event) => event.name))).toEqual(new Set(["queue depth", "HBM GB/s"]));
  const threads = new Map(
    trace.traceEvents
      .filter((event) => event.name === "thread_name")
      .map((e) => [e.tid, String(e.args?.name)]),
  );
  // One value, keyed by its component (Perfetto's counter track is per process, name and key).
  for (const event of counters) expect(Object.keys(event.args ?? {})).toEqual([threads.get(event.tid)]);
  // A pseudo-channel's bandwidth never exceeds its bus: 25.6 GB/s on default.yaml.
  for (const event of counters.filter((c) => c.name === "HBM GB/s")) {
    expect(event.args?.[threads.get(event.tid) as string] as number).toBeLessThanOrEqual(25.6 + 1e-9);
  }
});

it("a filter keeps matching components and a time window, closing slices the window cuts", () => {
  const tracer = traceOfGemm();
  const only = tracer.toChromeTrace("t", { components: "**.pe_gemm" });
  const threads = only.traceEvents.filter((e) => e.name === "thread_name").map((e) => e.args?.name);
  expect(threads).toEqual(["sip0.cube0.pe1.pe_gemm"]);
  const starts = tracer.events.filter((e) => e.type === "engine_start" && e.component.endsWith("pe_gemm"));
  const cut = (starts[0] as { tNs: number }).tNs + 1;
  const window = tracer.toChromeTrace("t", { components: "sip0.cube0.pe1.*", toNs: cut });
  const slices = window.traceEvents.filter((e) => e.ph === "B" || e.ph === "E");
  expect(slices.filter((e) => e.ph === "B")).toHaveLength(slices.filter((e) => e.ph === "E").length);
  const cutUs = Math.round(cut * 1000) / 1e6; // ts is µs rounded to the ps
  expect(window.traceEvents.some((e) => e.name === "(cut by the trace window)" && e.ts === cutUs)).toBe(true);
  expect(window.traceEvents.every((e) => e.ts <= cutUs)).toBe(true);
});

it("a tracer that reads only flows (flowsOnly) gets the flow slices of the full trace and nothing else", () => {
  class FlowsOnlyRecorder extends TraceRecorder {
    readonly flowsOnly = true;
  }
  const full = traceOfGemm();
  const flows = traceOfGemm(new FlowsOnlyRecorder());
  // The slices with a flow, each with the next engine_complete of its track, in the full trace.
  const expected: typeof full.events = [];
  const open = new Set<string>();
  for (const event of full.events) {
    if (event.type === "engine_start" && event.flow !== undefined) {
      expected.push(event);
      open.add(event.component);
    } else if (event.type === "engine_complete" && open.delete(event.component)) expected.push(event);
  }
  expect(expected.length).toBeGreaterThan(0);
  // The full trace has records without a flow (the HBM's slices, the scheduler's, the fabric's).
  expect(full.events.filter((event) => event.type !== "counter").length).toBeGreaterThan(expected.length);
  // The fabric's forwarding components do not skip theirs yet: the rest must be exactly the flows.
  const kept = flows.events.filter(
    (event) => event.type !== "counter" && !/xbar|noc|bridge|ucie/.test(event.component),
  );
  expect(kept).toEqual(expected);
  // Counters (queue depth, HBM GB/s) go on: the recorder takes them.
  expect(flows.events.some((event) => event.type !== "counter" && event.component.includes("hbm"))).toBe(
    false,
  );
  expect(full.events.some((event) => event.type !== "counter" && event.component.includes("hbm"))).toBe(true);
  expect(flows.events.some((event) => event.type === "tile_ready")).toBe(false);
});
