import { RunResultsSchema, Simulator } from "@kb/runtime";
import type { TL } from "@kb/tl";
import { describe, expect, it } from "vitest";
import { formatGemmPeaks, formatLaunches } from "./format-launches.js";

describe("formatGemmPeaks", () => {
  it("lists the rate per dtype, fastest first, dtypes of one rate joined", () => {
    // 64 PEs of 32 x 32 MACs at 1 GHz: 2048 FLOP/ns each at 1 cycle per step (f16, bf16).
    const peaks = { f32: 64 * 512e9, f16: 64 * 2048e9, bf16: 64 * 2048e9, i8: 64 * 4096e9 };
    expect(formatGemmPeaks(peaks)).toBe("262.1 TFLOP/s i8, 131.1 f16/bf16, 32.77 f32");
    expect(formatGemmPeaks({ i8: 0 })).toBe("");
  });
});

describe("formatLaunches", () => {
  it("results written before the per-launch figures print the window alone and no host copies", async () => {
    const sim = await Simulator.fromTopology({ name: "old-results" });
    const x = await sim.toDevice(sim.random([64], "f32", { seed: 1 }));
    await sim.launch(
      async (tl: TL, src: typeof x) => {
        await tl.load(src, [64], "f32");
      },
      { grid: { pes: 1, cubes: 1 }, args: [x], name: "reader" },
    );
    const current = sim.results();
    const { hostCopies: _, ...old } = current;
    const launches = current.launches.map(
      ({ name, pes, startNs, endNs, gemmFlops, mathFlops, hbmBytes, rooflineNs }) => ({
        name,
        pes,
        startNs,
        endNs,
        gemmFlops,
        mathFlops,
        hbmBytes,
        rooflineNs,
      }),
    );
    const parsed = RunResultsSchema.parse({ ...old, launches });
    const rows = formatLaunches(parsed, (bytes) => `${bytes} B`);
    expect(rows).toHaveLength(1);
    expect(rows[0]?.[0]).toBe("reader");
    // The current results print the figures and the one host copy of 256 B.
    const now = formatLaunches(current, (bytes) => `${bytes} B`);
    expect(now.map((row) => row[0])).toEqual([
      "reader",
      "  verdict",
      "  HBM",
      "  HBM minimal",
      "  bytes",
      "  roofline",
      "host copies",
    ]);
    expect(now.at(-1)?.[1]).toMatch(/^1 copy, 256 B in /);
  });
});
