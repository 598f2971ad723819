import { BUILTIN_COMPONENTS } from "@kb/builtins";
import { MemoryHarness } from "@kb/probe";
import { hbmTopologyParams } from "@kb/spec";
import { describe, expect, it } from "vitest";
import { definePlugin } from "./define.js";
import { defineMemoryModel } from "./memory.js";
import { ComponentRegistry } from "./registry.js";
import { graphFrom } from "./test-support.js";
import { type ChromeTraceEvent, TraceRecorder } from "./trace.js";

// Issue 33 point 3: a memory port's trace slices span its data-bus time (they were 0 ns long).

/** A model whose answers overlap on a port: every read starts 10 ns after arrival, 20 ns of bus. */
const overlapping = defineMemoryModel({
  kind: "hbm_ctrl",
  impl: "overlapping",
  description: "Test model: every request starts 10 ns after it arrives and takes 20 ns of bus.",
  params: hbmTopologyParams,
  create: () => ({
    service: (request) => ({ startNs: request.arrivalNs + 10, endNs: request.arrivalNs + 30, busyNs: 20 }),
  }),
});

/** The [start, end] ns of each B/E slice on the track named `name`, in file order. */
function slicesOf(events: readonly ChromeTraceEvent[], name: string): [number, number][] {
  const meta = events.find((event) => event.name === "thread_name" && event.args?.name === name);
  if (meta === undefined) return [];
  const out: [number, number][] = [];
  const open: number[] = [];
  for (const event of events) {
    if (event.pid !== meta.pid || event.tid !== meta.tid) continue;
    if (event.ph === "B") open.push(event.ts * 1000);
    else if (event.ph === "E") out.push([open.pop() as number, event.ts * 1000]);
  }
  return out;
}

function harness(impl?: string): { harness: MemoryHarness; tracer: TraceRecorder } {
  const tracer = new TraceRecorder();
  const registry = new ComponentRegistry()
    .registerBuiltins(BUILTIN_COMPONENTS)
    .registerPlugin(definePlugin({ meta: { name: "test", version: "0" }, components: [overlapping] }));
  const hbm = impl === undefined ? { pc_bw_gbs: 25.6 } : { impl, pc_bw_gbs: 25.6 };
  const graph = graphFrom({ cube: { hbm: { channels: 8, pseudo_channels: 2, ...hbm } } });
  return { harness: new MemoryHarness(graph, { registry, tracer }), tracer };
}

describe("fault: memory trace slices are 0 ns long", () => {
  it("hbm_ctrl_v1: each read's slice spans its bus time, after its access latency", () => {
    const { harness: h, tracer } = harness();
    // Three 64 B reads on port 0 at once: bus 2.5 ns each, the first after the 40 ns access.
    const reads = [h.request("read", 0, 64), h.request("read", 0, 64), h.request("read", 0, 64)];
    h.machine.run(h.machine.env.allOf(reads));
    const slices = slicesOf(tracer.toChromeTrace().traceEvents, "sip0.cube0.hbm#0");
    expect(slices).toEqual([
      [40, 42.5],
      [42.5, 45],
      [45, 47.5],
    ]);
  });

  it("a model whose answers overlap: the port's slices follow each other and add up to its busy time", () => {
    const { harness: h, tracer } = harness("test:overlapping");
    const reads = [h.request("read", 0, 64), h.request("read", 0, 64), h.request("read", 0, 64)];
    h.machine.run(h.machine.env.allOf(reads));
    const slices = slicesOf(tracer.toChromeTrace().traceEvents, "sip0.cube0.hbm#0");
    expect(slices).toEqual([
      [10, 30],
      [30, 50],
      [50, 70],
    ]);
    expect(h.memory.portBusyNs[0]).toBe(60);
  });
});
