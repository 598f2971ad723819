import type { TL } from "@kb/tl";
import { describe, expect, it } from "vitest";
import { type DeviceTensor, RunResultsSchema, Simulator } from "../index.js";

/** One HBM3-class stack per cube: 8 channels x 2 PCs x 25.6 GB/s = 409.6 GB/s. */
const topology = { name: "roofline", cube: { hbm: { channels: 8, pseudo_channels: 2, pc_bw_gbs: 25.6 } } };

/** C = A A on one PE, A (f16 64 x 64, 8 KiB) loaded twice, C stored in f32 (16 KiB). */
async function gemm(tl: TL, a: DeviceTensor, c: DeviceTensor) {
  const x = await tl.load(a, [64, 64], "f16");
  const y = await tl.load(a, [64, 64], "f16"); // the same 8 KiB again: actual traffic, not minimal
  await tl.store(c, await tl.dot(x, y, { outDtype: "f32" }));
}

describe("a launch's roofline", () => {
  it("a 64 x 64 x 64 f16 gemm: its ceilings, the HBM slope and its points (hand-computed)", async () => {
    const sim = await Simulator.fromTopology(topology);
    const a = await sim.toDevice(sim.random([64, 64], "f16", { seed: 1 }));
    const c = sim.empty([64, 64], "f32");
    const launch = await sim.launch(gemm, { grid: { pes: 1, cubes: 1 }, args: [a, c] });
    const roofline = launch.roofline;
    // 2 m n k = 524,288 FLOPs on PE_GEMM, nothing on PE_MATH.
    expect(roofline.flops).toBe(524_288);
    expect(roofline.flopsPerS).toBeCloseTo((524_288 / launch.durationNs) * 1e9, 3);
    // pe_gemm_v1, 32 x 32 at 1 GHz: 4096 FLOP/ns in i8, 2048 in f16 and bf16, 512 in f32; no
    // PE_MATH ran, so no MATH ceiling.
    expect(roofline.ceilings).toEqual([
      { engine: "gemm", dtype: "i8", flopsPerS: 4096e9 },
      { engine: "gemm", dtype: "f16", flopsPerS: 2048e9 },
      { engine: "gemm", dtype: "bf16", flopsPerS: 2048e9 },
      { engine: "gemm", dtype: "f32", flopsPerS: 512e9 },
    ]);
    expect(roofline.slopes[0]).toEqual({ resource: "hbm", name: "HBM", bytesPerS: launch.peak.hbmBytesPerS });
    expect(roofline.slopes[0]?.bytesPerS).toBeCloseTo(409.6e9, 3);
    // Actual: 8 KiB read twice + 16 KiB written = 32 KiB, 16 FLOP/B; minimal: 8 KiB + 16 KiB =
    // 24 KiB, 21.33 FLOP/B.
    const [actual, minimal] = roofline.points;
    expect(actual).toEqual({ traffic: "hbm", bytes: 32_768, intensity: 16, flopsPerS: roofline.flopsPerS });
    expect(minimal?.traffic).toBe("minimal");
    expect(minimal?.bytes).toBe(24_576);
    expect(minimal?.intensity).toBeCloseTo(524_288 / 24_576, 12);
    // The results publish it, schema-checked.
    expect(RunResultsSchema.parse(sim.results()).launches[0]?.roofline).toEqual(roofline);
  });
});
