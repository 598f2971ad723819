import { describe, expect, test } from "vitest";
import blockScaled from "../10-block-scaled-matmul.js";
import { runTutorial } from "./run-tutorial.js";

/** The tutorial through the runtime API, phase 2 and the load comparison included (run-tutorial.ts). */
const run = (params: Record<string, unknown>, topologyName = "default") =>
  runTutorial(blockScaled, params, topologyName);

// 160 x 96 x 256 in 64 x 64 blocks, BLOCK_K 128: 3 x 2 = 6 programs, the last row block 32 rows;
// 2 K steps each, every step loading A, B and their two scale tiles.
const RAGGED = { M: 160, N: 96, K: 256, BLOCK_M: 64, BLOCK_N: 64, BLOCK_K: 128 };

describe("tutorial 10: block-scaled matmul (nvfp4, mxfp8, mxfp4, mixed) with tl.dotScaled", {
  timeout: 120_000,
}, () => {
  test.each([
    ["mxfp8", "f16", "default"],
    ["mxfp4", "f32", "ref-cube"],
    // Triton's "mixed": A e4m3, B e2m1, tl.dotScaled(a, scale_a, "e4m3", b.T, scale_b, "e2m1", acc).
    ["mixed", "f16", "ref-cube"],
    ["mixed", "f32", "default"],
    // Triton's default, nvfp4: e2m1 elements with f8e4m3 scales per 16 along K.
    ["nvfp4", "f16", "default"],
    ["nvfp4", "f32", "ref-cube"],
  ] as const)(
    "%s into %s on %s.yaml, ragged edges: C PASSes phase 2 and phase 1 observed every load as phase 2 copied it",
    async (format, dtype, name) => {
      const { outputs, phases, dots } = await run({ ...RAGGED, format, dtype }, name);
      expect(outputs).toEqual([["C", true, 0]]);
      expect(dots).toBe(12);
      expect(phases).toMatchObject({ observed: 48, compared: 48, differing: 0, unmatched: 0 });
    },
  );

  // One program (128 x 128 x 256, BLOCK_K 128): two scaled dots of 128^3 on default.yaml's
  // pe_gemm_v1 (32 x 32, 8 cycles overhead, 1 GHz), each 16 passes of K + K/32 = 132 steps at
  // dtype_cycles 0.5 for f8e4m3 and f4e2m1 alike (1064 ns): docs/latency-model.md.
  // nvfp4 streams K + K/16 = 136 steps per pass (1096 ns a dot).
  test.each([
    ["nvfp4", 2 * (16 * 136 * 0.5 + 8)],
    ["mxfp8", 2 * (16 * 132 * 0.5 + 8)],
    ["mxfp4", 2 * (16 * 132 * 0.5 + 8)],
    ["mixed", 2 * (16 * 132 * 0.5 + 8)],
  ] as const)("%s: PE_GEMM is busy %d ns, the scaled MMA's time", async (format, busy) => {
    const { report, gemmBusyNs } = await run({ M: 128, N: 128, K: 256, format, dtype: "f32" });
    expect(report.pass).toBe(true);
    expect(gemmBusyNs).toBeCloseTo(busy, 6);
  });
});
