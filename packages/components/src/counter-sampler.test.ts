import { KbError } from "@kb/errors";
import { describe, expect, it } from "vitest";
import { CounterSampler } from "./counter-sampler.js";
import { TraceRecorder } from "./trace.js";

/** A sampler writing its points as [name, tNs, track, value]. */
function sampler(intervalNs: number): {
  sampler: CounterSampler;
  points: [string, number, string, number][];
} {
  const points: [string, number, string, number][] = [];
  return { sampler: new CounterSampler(intervalNs, (...point) => points.push(point)), points };
}

describe("CounterSampler", () => {
  it("keeps a change at most once per interval, drawn when the interval elapses, and the last value at the end", () => {
    const { sampler: counters, points } = sampler(1000);
    counters.sample("q", 0, "a", 0); // first sample: a point
    counters.sample("q", 100, "a", 0); // unchanged: nothing
    counters.sample("q", 200, "a", 3); // within 1000 ns of the point at 0: pending
    counters.sample("q", 300, "a", 5); // replaces the pending 3
    counters.sample("q", 1500, "a", 5); // the interval elapsed at 1000 with 5 pending: (1000, 5); 5 is no change
    counters.sample("q", 1700, "a", 2); // within 1000 ns of the point at 1000: pending
    counters.sample("q", 1800, "a", 5); // back to the plotted 5: the pending 2 is dropped
    counters.sample("q", 2600, "a", 1); // 1600 ns after the last point: a point at once
    counters.sample("q", 2700, "a", 4); // pending until 3600
    counters.flush(3000); // the run ends at 3000, before 3600: (3000, 4)
    expect(points).toEqual([
      ["q", 0, "a", 0],
      ["q", 1000, "a", 5],
      ["q", 2600, "a", 1],
      ["q", 3000, "a", 4],
    ]);
  });

  it("keeps the last value before a gap: a pending change is drawn at the interval's end, then the new one", () => {
    const { sampler: counters, points } = sampler(1000);
    counters.sample("q", 0, "a", 0);
    counters.sample("q", 100, "a", 7);
    counters.sample("q", 5000, "a", 9);
    expect(points).toEqual([
      ["q", 0, "a", 0],
      ["q", 1000, "a", 7],
      ["q", 5000, "a", 9],
    ]);
  });

  it("flushes a pending change at its interval's end when the run goes on past it", () => {
    const { sampler: counters, points } = sampler(1000);
    counters.sample("q", 0, "a", 1);
    counters.sample("q", 10, "a", 2);
    counters.flush(3000);
    counters.flush(3000); // nothing pending any more
    expect(points).toEqual([
      ["q", 0, "a", 1],
      ["q", 1000, "a", 2],
    ]);
  });

  it("samples each name on each track on its own", () => {
    const { sampler: counters, points } = sampler(1000);
    counters.sample("q", 0, "a", 1);
    counters.sample("q", 0, "b", 1);
    counters.sample("bw", 0, "a", 1);
    counters.sample("q", 400, "b", 2); // pending on (q, b) only
    counters.sample("bw", 1200, "a", 3); // (bw, a): 1200 after its point
    counters.flush(1200);
    expect(points).toEqual([
      ["q", 0, "a", 1],
      ["q", 0, "b", 1],
      ["bw", 0, "a", 1],
      ["bw", 1200, "a", 3],
      ["q", 1000, "b", 2],
    ]);
  });

  it("with interval 0 keeps every change and drops repeats", () => {
    const { sampler: counters, points } = sampler(0);
    counters.sample("q", 0, "a", 1);
    counters.sample("q", 0, "a", 2);
    counters.sample("q", 5, "a", 2);
    counters.sample("q", 6, "a", 3);
    counters.flush(10);
    expect(points).toEqual([
      ["q", 0, "a", 1],
      ["q", 0, "a", 2],
      ["q", 6, "a", 3],
    ]);
  });

  it("refuses an interval that is negative or not a number", () => {
    for (const interval of [-1, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => new CounterSampler(interval, () => {})).toThrow(KbError);
    }
    expect(() => new CounterSampler(-1, () => {})).toThrow(/interval must be a number of ns >= 0.*got -1/);
  });
});

describe("TraceRecorder counters and timestamps", () => {
  it("samples counters (1 µs by default) and ends a pending change at the last time recorded", () => {
    const tracer = new TraceRecorder();
    expect(tracer.counterIntervalNs).toBe(1000);
    tracer.counter("queue depth", 0, "sip0.cube0.xbar0", 0);
    tracer.counter("queue depth", 10, "sip0.cube0.xbar0", 1);
    tracer.counter("queue depth", 20, "sip0.cube0.xbar0", 2);
    tracer.record("engine_start", 400, "sip0.cube0.xbar0", "p");
    tracer.record("engine_complete", 450.5, "sip0.cube0.xbar0", "p");
    const counters = tracer.toChromeTrace().traceEvents.filter((event) => event.ph === "C");
    // The component is the args key: Perfetto draws a track per process, counter name and key.
    expect(counters.map((event) => [event.ts, event.args])).toEqual([
      [0, { "sip0.cube0.xbar0": 0 }],
      [0.4505, { "sip0.cube0.xbar0": 2 }], // the run ended at 450.5 ns, before the interval (1000 ns)
    ]);
  });

  it("keeps every change with counterIntervalNs 0", () => {
    const tracer = new TraceRecorder({ counterIntervalNs: 0 });
    for (const [t, value] of [
      [0, 0],
      [10, 1],
      [20, 1],
      [30, 2],
    ] as const)
      tracer.counter("queue depth", t, "host", value);
    const counters = tracer.toChromeTrace().traceEvents.filter((event) => event.ph === "C");
    expect(counters.map((event) => [event.ts, event.args?.host])).toEqual([
      [0, 0],
      [0.01, 1],
      [0.03, 2],
    ]);
  });

  it("writes ts as µs rounded to the ps, without the float noise of ns / 1000", () => {
    const tracer = new TraceRecorder();
    tracer.record("engine_start", 1208.18, "host", "a");
    tracer.record("engine_complete", 2048.9049999999997, "host", "a");
    tracer.record("launch", 1234567.0004, "host", "b");
    const text = JSON.stringify(tracer.toChromeTrace().traceEvents.filter((event) => event.ph !== "M"));
    expect(text).toContain('"ts":1.20818,');
    expect(text).toContain('"ts":2.048905,');
    expect(text).toContain('"ts":1234.567,');
  });
});
