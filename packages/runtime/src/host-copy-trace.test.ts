import { TraceRecorder } from "@kb/components";
import { expect, it } from "vitest";
import { Simulator } from "./index.js";

// A host copy writes HBM like any kernel: the trace's `HBM GB/s` counter shows it (it once read 0:
// the counter was sampled at answer time, before a request's own bus time).
it("a host copy's HBM writes show in the trace's HBM GB/s counter, over the copy's time", async () => {
  const tracer = new TraceRecorder({ counterIntervalNs: 0 });
  // One stack of 8 channels x 2 pseudo-channels at 25.6 GB/s.
  const topology = { name: "host-copy", cube: { hbm: { channels: 8, pseudo_channels: 2, pc_bw_gbs: 25.6 } } };
  const sim = await Simulator.fromTopology(topology, { tracer });
  await sim.toDevice(sim.random([256 * 1024], "f32", { seed: 1 })); // 1 MiB
  tracer.flushCounters();
  const points = tracer.events.filter((event) => event.type === "counter" && event.label === "HBM GB/s");
  // Every byte written is in the counter: sum over points of value (B/ns) x 1 µs bin = 1 MiB.
  // The points of a port are a step function at bin starts; a bin's value holds until the next point.
  let bytes = 0;
  const byTrack = new Map<string, { tNs: number; value: number }[]>();
  for (const point of points) {
    const list = byTrack.get(point.component) ?? [];
    list.push({ tNs: point.tNs, value: point.value ?? 0 });
    byTrack.set(point.component, list);
  }
  for (const list of byTrack.values())
    for (let i = 0; i + 1 < list.length; i++)
      bytes +=
        (list[i] as { value: number }).value *
        ((list[i + 1] as { tNs: number }).tNs - (list[i] as { tNs: number }).tNs);
  expect(byTrack.size).toBe(16);
  expect(bytes).toBeCloseTo(1024 * 1024, 3);
  expect(Math.max(...points.map((point) => point.value ?? 0))).toBeLessThanOrEqual(25.6 + 1e-9);
});
