import { fileURLToPath } from "node:url";
import { isKbError, type KbError } from "@kb/errors";
import type { TL } from "@kb/tl";
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { type DeviceTensor, defineBench, parseBenchParams, RunResultsSchema, Simulator } from "./index.js";

const defaultYaml = fileURLToPath(new URL("../../../topologies/default.yaml", import.meta.url));

async function failure(promise: Promise<unknown>): Promise<KbError> {
  try {
    await promise;
  } catch (error) {
    if (isKbError(error)) return error;
    throw error;
  }
  throw new Error("expected a KbError");
}

async function copyKernel(tl: TL, src: DeviceTensor, dst: DeviceTensor, rows: number) {
  const r0 = tl.programId(0) * rows;
  const tile = await tl.load(src.at(r0, 0), [rows, src.shape[1] as number], src.dtype);
  await tl.store(dst.at(r0, 0), tile);
}

describe("Simulator", () => {
  it("host copies are timed and round-trip the bytes; device tensors are page-aligned in their cube", async () => {
    const sim = await Simulator.fromTopology(defaultYaml);
    const host = sim.random([256, 128], "bf16", { seed: 7 });
    const A = await sim.toDevice(host, { cube: 1, name: "A" });
    const afterWrite = sim.now;
    expect(afterWrite).toBeGreaterThan(0);
    // 64 KiB over the 64 GB/s host link alone takes 1024 ns.
    expect(afterWrite).toBeGreaterThan(65536 / 64);
    expect(A.placement).toEqual({ sip: 0, cube: 1, space: "hbm" });
    expect(A.address % (2 * 2 ** 20)).toBe(0);
    const back = await sim.fromDevice(A);
    expect(sim.now).toBeGreaterThan(afterWrite);
    expect(back.equals(host)).toBe(true);
    expect(sim.hostWrites).toHaveLength(1);
  });

  it("launch runs one kernel instance per grid PE with program ids from the grid, and moves real bytes", async () => {
    const sim = await Simulator.fromTopology(defaultYaml);
    const x = sim.random([64, 32], "f32", { seed: 3 });
    const X = await sim.toDevice(x);
    const Y = sim.empty([64, 32], "f32");
    const grid = sim.grid({ pes: 8, cubes: [0] });
    expect(grid.size).toBe(8);
    const record = await sim.launch(copyKernel, { grid, args: [X, Y, 8] });
    expect(record).toMatchObject({ name: "copyKernel", pes: 8 });
    expect(record.endNs).toBeGreaterThan(record.startNs);
    expect((await sim.fromDevice(Y)).equals(x)).toBe(true);
    // Scratch is returned after the launch: a second launch fits again.
    await sim.launch(copyKernel, { grid, args: [X, Y, 8] });
    expect(sim.kernels.names()).toEqual(["copyKernel"]);
  });

  it("results: parse with the published schema, count 2 m n k per GEMM and never beat the roofline", async () => {
    const sim = await Simulator.fromTopology(defaultYaml);
    const A = await sim.toDevice(sim.random([128, 128], "f16", { seed: 1 }));
    async function dotKernel(tl: TL, a: DeviceTensor) {
      const t = await tl.load(a, [128, 128], "f16");
      await tl.dot(t, t);
    }
    await sim.launch(dotKernel, { grid: { pes: 1, cubes: 1 }, args: [A] });
    const results = RunResultsSchema.parse(sim.results("dot", { n: 128 }));
    expect(results.work.gemmFlops).toBe(2 * 128 ** 3);
    // One PE_GEMM ran: 32 x 32 MACs x 2 flops at 1 GHz, at its fastest dtype (i8: 0.5 cycles per
    // MAC step) = 4096 GFLOP/s: a peak no dtype exceeds, so the roofline stays a true bound.
    expect(results.peak.gemmFlopsPerS).toBe(4096e9);
    expect(results.rooflineNs).toBeGreaterThan(0);
    expect(results.simTimeNs).toBeGreaterThanOrEqual(results.rooflineNs);
    expect(results.launches).toHaveLength(1);
    // The launch alone: its GEMM and its HBM read of the one 32 KiB tile, on one PE.
    const [launch] = results.launches;
    expect(launch?.gemmFlops).toBe(2 * 128 ** 3);
    expect(launch?.hbmBytes).toBe(128 * 128 * 2);
    expect((launch?.endNs ?? 0) - (launch?.startNs ?? 0)).toBeGreaterThanOrEqual(
      launch?.rooflineNs ?? Infinity,
    );
    expect(results.busiest.length).toBeGreaterThan(0);
  });

  it("an access outside an allocation is a located MEMORY_ACCESS error; the simulator then refuses more work", async () => {
    const sim = await Simulator.fromTopology(defaultYaml);
    const X = sim.empty([16, 16], "f32", { name: "X" });
    async function overrun(tl: TL, x: DeviceTensor) {
      await tl.load(x, [32, 16], "f32");
    }
    const error = await failure(sim.launch(overrun, { grid: { pes: [2], cubes: [0] }, args: [X] }));
    expect(error.code).toBe("MEMORY_ACCESS");
    expect(error.message).toMatch(/kernel overrun on sip0\.cube0\.pe2/);
    const again = await failure(sim.launch(overrun, { grid: { pes: [2], cubes: [0] }, args: [X] }));
    expect(again.message).toMatch(/stopped at an error earlier/);
  });

  it("grid errors and double frees are clear", async () => {
    const sim = await Simulator.fromTopology({ name: "t" });
    expect(() => sim.grid({ pes: 9 })).toThrow(/grid pes: 9 is not a count 1\.\.8/);
    expect(() => sim.grid({ cubes: [0, 0] })).toThrow(/distinct indices/);
    const t = sim.empty([4], "f16");
    sim.free(t);
    expect(() => sim.free(t)).toThrow(/double free|already freed/i);
  });
});

describe("defineBench and params", () => {
  const bench = defineBench({
    name: "demo",
    params: z.object({
      n: z.number().int().positive().default(64),
      dtype: z.enum(["f16", "f32"]).default("f16"),
    }),
    async run() {},
  });

  it("command-line values become JSON where they parse; defaults fill the rest", () => {
    expect(parseBenchParams(bench, { n: "128" })).toEqual({ n: 128, dtype: "f16" });
    expect(parseBenchParams(bench, { dtype: "f32" })).toEqual({ n: 64, dtype: "f32" });
  });

  it("a misspelt param is an error, not silently ignored", () => {
    expect(() => parseBenchParams(bench, { nn: "128" })).toThrow(/nn: not a param of this bench/);
  });

  it("a bad value is an error naming the param and listing the bench's params", () => {
    expect(() => parseBenchParams(bench, { n: "-3" })).toThrow(
      /bench "demo": bad params:\n {2}n: .*\nIts params: n \(default 64\), dtype \(default "f16"\)/,
    );
  });
});
