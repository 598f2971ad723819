import type { TL } from "@kb/tl";
import { describe, expect, it } from "vitest";
import { type DeviceTensor, RunResultsSchema, Simulator } from "../index.js";
import { HbmFootprint } from "./launch-work.js";

/** One HBM3-class stack per cube as default.yaml's: 8 channels x 2 PCs x 25.6 GB/s = 409.6 GB/s. */
const topology = { name: "launch-work", cube: { hbm: { channels: 8, pseudo_channels: 2, pc_bw_gbs: 25.6 } } };
const N = 256; // f32: 1 KiB per operand

/** The host copies so far (every simulator of this version reports them). */
function hostCopiesOf(sim: Simulator) {
  const copies = sim.results().hostCopies;
  if (copies === undefined) throw new Error("no hostCopies in the results");
  return copies;
}

async function vectorAdd(tl: TL, x: DeviceTensor, y: DeviceTensor, z: DeviceTensor) {
  const a = await tl.load(x, [N], "f32");
  const b = await tl.load(y, [N], "f32");
  await tl.store(z, await tl.add(a, b));
}

describe("per-launch results", () => {
  it("a 1-PE vector add: the kernel window's HBM rate and roofline, host copies apart (hand-computed)", async () => {
    const sim = await Simulator.fromTopology(topology);
    const x = await sim.toDevice(sim.random([N], "f32", { seed: 1 }));
    const y = await sim.toDevice(sim.random([N], "f32", { seed: 2 }));
    const z = sim.empty([N], "f32");
    const copiesBefore = hostCopiesOf(sim);
    const launch = await sim.launch(vectorAdd, { grid: { pes: 1, cubes: 1 }, args: [x, y, z] });
    await sim.fromDevice(z);
    const results = RunResultsSchema.parse(sim.results());
    const copies = hostCopiesOf(sim);
    // The results publish the record as the launch returned it, without its internal peaks.
    const { peaks: _, ...published } = launch;
    expect(results.launches).toEqual([published]);

    // The two copies in (2 KiB) come before the launch, which starts when they end.
    expect(copiesBefore).toMatchObject({ count: 2, bytes: 2048 });
    expect(launch.startNs).toBeCloseTo(copiesBefore.ns, 9);
    expect(copies.count).toBe(3);
    expect(copies.bytes).toBe(3072);
    expect(results.hostCopies).toEqual(copies);
    expect(results.simTimeNs).toBeCloseTo(launch.endNs + copies.ns - copiesBefore.ns, 9);

    // Two 1 KiB loads and a 1 KiB store in cube 0's stack: 3072 B at its 409.6 GB/s.
    expect(launch.hbmBytes).toBe(3072);
    expect(launch.peak.hbmBytesPerS).toBeCloseTo(409.6e9, 3);
    expect(launch.rooflineNs).toBeCloseTo(3072 / 409.6, 9); // 7.5 ns
    expect(launch.boundBy).toBe("hbm");
    const window = launch.endNs - launch.startNs;
    expect(launch.durationNs).toBe(window);
    // A 1 KiB load behind xbar0 takes 52.06 ns and a 1 KiB store 51.03 ns (fabric.test.ts, the
    // same stack); the kernel waits for each: its window is at least 2 x 52.06 + 51.03.
    expect(window).toBeGreaterThan(2 * 52.06 + 51.03);
    expect(launch.achieved.hbmBytesPerS).toBeCloseTo((3072 / window) * 1e9, 3);
    expect(launch.achieved.hbmFraction).toBeCloseTo(7.5 / window, 12);
    expect(launch.efficiency).toBeCloseTo(7.5 / window, 12);
    // Every operand is read or written once: the minimal traffic is the actual one.
    expect(launch.minimal).toMatchObject({ hbmReadBytes: 2048, hbmWriteBytes: 1024, hbmBytes: 3072 });
    expect(launch.minimal.rooflineNs).toBeCloseTo(7.5, 9);
    expect(launch.traffic.dmaBytes).toBe(3072);
    // N adds on PE_MATH in the window.
    expect(launch.mathFlops).toBe(N);
    expect(launch.achieved.mathFlopsPerS).toBeCloseTo((N / window) * 1e9, 3);

    // The whole-run figures include the copies: 6 KiB over the whole simulated time.
    expect(results.work.hbmBytes).toBe(6144);
    expect(results.achieved.hbmBytesPerS).toBeCloseTo((6144 / results.simTimeNs) * 1e9, 3);
  });

  it("a tile read twice moves its bytes twice but counts once in the minimal traffic", async () => {
    const sim = await Simulator.fromTopology(topology);
    const x = await sim.toDevice(sim.random([N + N / 2], "f32", { seed: 1 }));
    const z = sim.empty([N], "f32");
    async function twice(tl: TL, src: DeviceTensor, dst: DeviceTensor) {
      const first = await tl.load(src, [N], "f32");
      await tl.load(src, [N], "f32"); // the same 1 KiB again
      await tl.load(src.at(N / 2), [N], "f32"); // half of it again, and 512 B more
      await tl.store(dst, first);
    }
    const record = await sim.launch(twice, { grid: { pes: 1, cubes: 1 }, args: [x, z] });
    expect(record.hbmBytes).toBe(3 * 1024 + 1024);
    expect(record.minimal).toMatchObject({ hbmReadBytes: 1536, hbmWriteBytes: 1024, hbmBytes: 2560 });
    expect(record.bounds.hbmNs).toBeCloseTo(4096 / 409.6, 9);
    expect(record.bounds.minimalHbmNs).toBeCloseTo(2560 / 409.6, 9);
    expect(record.minimal.rooflineNs).toBeCloseTo(2560 / 409.6, 9);
    expect(record.minimal.efficiency).toBeCloseTo(2560 / 409.6 / record.durationNs, 12);
  });

  it("GEMM FLOPs by dtype, against the peak of that dtype", async () => {
    const sim = await Simulator.fromTopology(topology);
    const a = await sim.toDevice(sim.random([64, 64], "f16", { seed: 1 }));
    async function dot(tl: TL, src: DeviceTensor) {
      const t = await tl.load(src, [64, 64], "f16");
      await tl.dot(t, t);
    }
    const record = await sim.launch(dot, { grid: { pes: 1, cubes: 1 }, args: [a] });
    expect(record.gemmFlopsByDtype).toEqual({ f16: 2 * 64 ** 3 });
    // pe_gemm_v1, 32 x 32 at 1 GHz: 2048 FLOP/ns in f16 (1 cycle per step), 4096 in i8.
    expect(record.peak.gemmFlopsPerSByDtype).toMatchObject({
      i8: 4096e9,
      f16: 2048e9,
      bf16: 2048e9,
      f32: 512e9,
    });
    expect(record.bounds.gemmNs).toBeCloseTo((2 * 64 ** 3) / 2048, 9); // 256 ns
    expect(record.achieved.gemmFraction).toBeCloseTo(256 / record.durationNs, 12);
    // The roofline at the best dtype (i8: 128 ns) against the one at f16 (256 ns; the 8 KiB load,
    // 8192 / 409.6 = 20 ns, is below both): efficiency and dtypeEfficiency tell them apart.
    expect(record.rooflineNs).toBeCloseTo(128, 9);
    expect(record.dtypeRooflineNs).toBeCloseTo(256, 9);
    expect(record.dtypeEfficiency).toBeCloseTo(256 / record.durationNs, 12);
    expect(record.efficiency).toBeCloseTo(128 / record.durationNs, 12);
    expect(sim.results().peak.gemmFlopsPerSByDtype?.f16).toBe(2048e9);
  });
});

describe("HbmFootprint", () => {
  it("merges strided rows and overlapping blocks, reads and writes apart, also after compaction", () => {
    const footprint = new HbmFootprint();
    footprint.observe(false, 0, 4, 16, 64); // [0,16) [64,80) [128,144) [192,208): 64 B
    footprint.observe(false, 8, 1, 16, 16); // [8,24): 8 B more
    footprint.observe(true, 0, 2, 32, 32); // contiguous rows: [0,64)
    expect(footprint.readBytes).toBe(72);
    expect(footprint.writeBytes).toBe(64);
    for (let i = 0; i < 70_000; i++) footprint.observe(false, 1000 + (i % 7), 1, 4, 4);
    expect(footprint.readBytes).toBe(72 + 10); // [1000, 1010)
    // Many disjoint ranges (a column block of rows): merged as they grow, counted exactly.
    const strided = new HbmFootprint();
    for (let i = 0; i < 200_000; i++) strided.observe(false, i * 64, 1, 32, 32);
    for (let i = 0; i < 200_000; i++) strided.observe(false, i * 64 + 16, 1, 32, 32);
    expect(strided.readBytes).toBe(200_000 * 48);
    expect(strided.writeBytes).toBe(0);
  });

  it("a strided block met again adds nothing; one that differs in any field, or is a write, still counts", () => {
    const footprint = new HbmFootprint();
    footprint.observe(false, 0, 4, 16, 64); // [0,16) [64,80) [128,144) [192,208): 64 B
    footprint.observe(false, 0, 4, 16, 64);
    expect(footprint.readBytes).toBe(64);
    footprint.observe(false, 0, 5, 16, 64); // one row more: [256,272)
    footprint.observe(false, 0, 4, 24, 64); // wider rows: 8 B more a row
    footprint.observe(false, 0, 4, 16, 32); // another stride: [32,48) [96,112)
    expect(footprint.readBytes).toBe(64 + 16 + 32 + 32);
    expect(footprint.writeBytes).toBe(0);
    footprint.observe(true, 0, 4, 16, 64); // the first block written
    expect(footprint.writeBytes).toBe(64);
    // Blocks that take each other's slots (more than the cache holds), each listed again.
    const many = new HbmFootprint();
    for (let round = 0; round < 3; round++)
      for (let i = 0; i < 20_000; i++) many.observe(false, i * 4096, 2, 64, 1024);
    expect(many.readBytes).toBe(20_000 * 128);
  });

  it("counts each byte once however blocks overlap, touch, nest or repeat (against a set of bytes)", () => {
    // A fixed pseudo-random sequence (no Math.random): blocks in a 4 KiB window, many compactions.
    let seed = 12345;
    const next = (below: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % below;
    };
    const footprint = new HbmFootprint();
    const bytes = new Set<number>();
    for (let i = 0; i < 300_000; i++) {
      const address = next(4096);
      const rows = 1 + next(3);
      const rowBytes = next(24); // 0: an empty block
      const stride = rowBytes + next(3) * 8;
      footprint.observe(false, address, rows, rowBytes, stride);
      for (let row = 0; row < rows; row++)
        for (let byte = 0; byte < rowBytes; byte++) bytes.add(address + row * stride + byte);
      if (i % 100_000 === 0) expect(footprint.readBytes).toBe(bytes.size);
    }
    expect(footprint.readBytes).toBe(bytes.size);
    // Touching blocks in a stream ([0,8) [8,16) ...) and nested ones inside them.
    const stream = new HbmFootprint();
    for (let i = 0; i < 1000; i++) stream.observe(true, i * 8, 1, 8, 8);
    stream.observe(true, 100, 1, 4, 4);
    stream.observe(true, 8000, 1, 0, 0);
    expect(stream.writeBytes).toBe(8000);
  });
});
