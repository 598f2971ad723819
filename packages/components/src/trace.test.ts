import { encodeAddress } from "@kb/topology";
import { expect, it } from "vitest";
import { machineOf } from "./test-support.js";
import { type ChromeTraceEvent, TraceRecorder } from "./trace.js";

const hbm = (offset: number) => encodeAddress({ sip: 0, cube: 0, space: "hbm", offset });

it("exports Chrome trace-event JSON: a track per component, matched B/E slices, monotonic time per track", () => {
  const tracer = new TraceRecorder();
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
  const byTrack = new Map<number, ChromeTraceEvent[]>();
  for (const event of trace.traceEvents.filter((e) => e.ph !== "M")) {
    const list = byTrack.get(event.tid) ?? [];
    list.push(event);
    byTrack.set(event.tid, list);
  }
  for (const [tid, events] of byTrack) {
    let depth = 0;
    let last = -1;
    for (const event of events) {
      expect(event.ts, `track ${names.get(tid)}`).toBeGreaterThanOrEqual(last);
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
