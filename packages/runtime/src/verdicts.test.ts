import type { TL } from "@kb/tl";
import { describe, expect, it } from "vitest";
import { type DeviceTensor, RunResultsSchema, Simulator } from "./index.js";

// The bottleneck verdicts of real launches on crafted kernels (the rules on their own:
// bottleneck.test.ts). One HBM stack of 8 channels x 2 pseudo-channels at 25.6 GB/s each.
const topology = { name: "verdicts", cube: { hbm: { channels: 8, pseudo_channels: 2, pc_bw_gbs: 25.6 } } };

/** 16 loads, one after the other, of the same 256 B (64 f32): one interleave unit, one pseudo-channel. */
async function sixteenLoads(tl: TL, src: DeviceTensor) {
  for (let i = 0; i < 16; i++) await tl.load(src, [64], "f32");
}

describe("bottleneck verdicts of launches", () => {
  it("8 PEs reading the same 256 B hammer one pseudo-channel: hbm-hotspot, with its busy time", async () => {
    const sim = await Simulator.fromTopology(topology);
    const x = await sim.toDevice(sim.random([64], "f32", { seed: 1 }));
    const launch = await sim.launch(sixteenLoads, { grid: { pes: 8, cubes: 1 }, args: [x] });
    // 8 PEs x 16 loads x 256 B on one pseudo-channel at 25.6 GB/s: 128 x 10 ns = 1280 ns of its bus.
    expect(launch.verdict.rule).toBe("hbm-hotspot");
    expect(launch.verdict.resource).toMatch(/^sip0\.cube0\.hbm pc\d+$/);
    expect(launch.verdict.utilisation * launch.durationNs).toBeCloseTo(1280, 6);
    expect(launch.verdict.text).toContain("while the other 15 average 0.0% (address mapping hotspot");
    // The whole-run per-pseudo-channel rows show the same port carrying every byte.
    const results = RunResultsSchema.parse(sim.results());
    const ports = results.hbmPorts?.[0]?.ports ?? [];
    expect(ports).toHaveLength(16);
    const hot = Number(launch.verdict.resource.replace(/.*pc/, ""));
    // The launch's 32 KiB, and the 256 B host copy before it.
    expect(ports[hot]?.bytes).toBe(128 * 256 + 256);
    expect(ports.filter((_, port) => port !== hot).every((port) => port.bytes === 0)).toBe(true);
  });

  it("one PE loading one tile at a time is latency-bound on its PE_DMA read lane", async () => {
    const sim = await Simulator.fromTopology(topology);
    const x = await sim.toDevice(sim.random([64], "f32", { seed: 1 }));
    const launch = await sim.launch(sixteenLoads, { grid: { pes: 1, cubes: 1 }, args: [x] });
    expect(launch.verdict.rule).toBe("latency");
    expect(launch.verdict.resource).toBe("pe_dma read");
    // 4 KiB over the window against the stack's 409.6 GB/s.
    const hbmFraction = 4096 / launch.durationNs / 409.6;
    expect(launch.achieved.hbmFraction).toBeCloseTo(hbmFraction, 12);
    expect(launch.verdict.text).toContain(
      `bound by PE_DMA read lanes: ${(launch.verdict.utilisation * 100).toFixed(1)}% busy on 1/1 PEs, HBM at ${(hbmFraction * 100).toFixed(1)}% of peak (latency`,
    );
    // The read lane's busy time in the window is the whole run's (only the launch used it); the
    // write lane never ran, so the component's mean is half the lane's.
    const results = RunResultsSchema.parse(sim.results());
    const dma = results.components.find((row) => row.id === "sip0.cube0.pe0.pe_dma");
    const read = dma?.lanes?.find((lane) => lane.name === "read");
    expect(read?.busyNs).toBeCloseTo(launch.verdict.utilisation * launch.durationNs, 6);
    expect(dma?.lanes?.find((lane) => lane.name === "write")?.busyNs).toBe(0);
    expect(dma?.utilisation).toBeCloseTo((read?.utilisation ?? 0) / 2, 12);
    const kind = results.byKind.find((row) => row.kind === "pe_dma");
    expect(kind?.lanes?.max).toBeCloseTo(read?.utilisation ?? 0, 12);
    expect(kind?.lanes?.busiest).toBe("sip0.cube0.pe0.pe_dma read");
  });

  it("5 programs of a PE_DMA-bound kernel on 4 PEs: the verdict names the tail wave", async () => {
    const sim = await Simulator.fromTopology(topology);
    const x = await sim.toDevice(sim.random([64], "f32", { seed: 1 }));
    const launch = await sim.launch(sixteenLoads, { grid: { pes: 4, cubes: 1 }, programs: [5], args: [x] });
    // Wave 1 on 4 PEs, wave 2 on 1: 2 x 4 = 8 slots, 3 empty = 37.5%.
    expect(launch.verdict.text).toContain(
      "(tail: 5 programs on 4 PEs run in 2 waves, the last with 1; 37.5% of PE slots idle)",
    );
    const few = await sim.launch(sixteenLoads, { grid: { pes: 4, cubes: 1 }, programs: [2], args: [x] });
    expect(few.verdict.text).toContain("(2 programs on 4 PEs: 2 PEs had none)");
  });
});
