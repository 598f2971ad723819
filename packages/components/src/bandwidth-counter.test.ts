import { describe, expect, it } from "vitest";
import { BANDWIDTH_BIN_NS, BandwidthCounter } from "./bandwidth-counter.js";
import { TraceRecorder } from "./trace.js";

/** The `HBM GB/s` points of `tracer` as `[tNs, track, value]`, in the order recorded. */
function points(tracer: TraceRecorder): [number, string, number][] {
  tracer.flushCounters();
  return tracer.events
    .filter((event) => event.type === "counter")
    .map((event) => [event.tNs, event.component, Number((event.value ?? 0).toFixed(9))]);
}

describe("BandwidthCounter (the HBM GB/s trace counter)", () => {
  it("sums each port's bus time into 1 µs bins and draws them when the trace is exported", () => {
    expect(BANDWIDTH_BIN_NS).toBe(1000);
    const tracer = new TraceRecorder({ counterIntervalNs: 0 });
    // 25.6 B/ns per port (a 25.6 GB/s pseudo-channel).
    const counter = new BandwidthCounter(tracer, "hbm", 2, 25.6);
    counter.add(0, 0, 1500); // bin 0 full, bin 1 half
    counter.add(0, 2500, 2600); // bin 2: 100 ns
    counter.add(0, 5000, 5250); // bin 5: 250 ns, after idle bins 3 and 4
    counter.add(1, 700, 800); // the other port: bin 0, 100 ns
    expect(tracer.events).toHaveLength(0); // nothing until the export
    expect(points(tracer)).toEqual([
      [0, "hbm#0", 25.6], // 1000 / 1000 x 25.6
      [1000, "hbm#0", 12.8], // 500 / 1000 x 25.6
      [2000, "hbm#0", 2.56], // 100 / 1000 x 25.6
      [3000, "hbm#0", 0], // idle from bin 3
      [5000, "hbm#0", 6.4], // 250 / 1000 x 25.6
      [6000, "hbm#0", 0],
      [0, "hbm#1", 2.56],
      [1000, "hbm#1", 0],
    ]);
    // Exporting again draws nothing new.
    expect(points(tracer)).toHaveLength(8);
  });

  it("counts a request's own bus time, in any order, even one answered long before it ends", () => {
    const tracer = new TraceRecorder({ counterIntervalNs: 0 });
    const counter = new BandwidthCounter(tracer, "hbm", 1, 10);
    // A host copy: one request holding the bus for 2.5 µs, answered at once; then an earlier
    // interval of a reordering controller.
    counter.add(0, 3000, 5500);
    counter.add(0, 1200, 1400);
    expect(points(tracer)).toEqual([
      [1000, "hbm#0", 2], // 200 / 1000 x 10
      [2000, "hbm#0", 0],
      [3000, "hbm#0", 10], // bins 3 and 4 full: one point (the trace drops a repeated value)
      [5000, "hbm#0", 5],
      [6000, "hbm#0", 0],
    ]);
  });
});
