import { describe, expect, it } from "vitest";
import type { TLContext } from "./context.js";
import {
  hbmAt as hbm,
  listCommands as list,
  machineOf,
  runKernel,
  scratchAt as scratch,
} from "./test-support.js";

// Triton tutorial 10's "mixed" case: tl.dotScaled(a, sa, "e4m3", b, sb, "e2m1", acc), fp8 rows
// times fp4 columns, each with its own e8m0 scales. The GEMM command names B's dtype beside A's,
// and PE_GEMM streams at the slower of the two formats' rates (docs/latency-model.md, "Scaled GEMM").
const TILE = [128, 128];

const loads = async (tl: TLContext) => ({
  a: await tl.load(hbm(0), TILE, "f8e4m3"),
  sa: await tl.load(hbm(32768), [128, 4], "i8"),
  b: await tl.load(hbm(65536), TILE, "f4e2m1"),
  sb: await tl.load(hbm(98304), [128, 4], "i8"),
});

/** The ns a mixed e4m3 x e2m1 dotScaled adds, on a PE_GEMM with these `dtype_cycles`. */
async function mixedNs(dtypeCycles: Record<string, number>): Promise<number> {
  const end = async (kernel: (tl: TLContext) => Promise<void>) => {
    const machine = machineOf({
      pe_template: { components: { pe_gemm: { params: { dtype_cycles: dtypeCycles } } } },
    } as never);
    await runKernel(machine, kernel);
    return machine.env.now;
  };
  const before = await end(async (tl) => {
    await loads(tl);
  });
  const after = await end(async (tl) => {
    const { a, sa, b, sb } = await loads(tl);
    await tl.dotScaled(a, sa, "e4m3", b, sb, "e2m1");
  });
  return after - before;
}

describe("tl.dotScaled with mixed formats (mxfp8 x mxfp4)", { timeout: 60_000 }, () => {
  it("is one GEMM command with A's dtype and B's dtype", async () => {
    const commands = await list(async (tl) => {
      const a = await tl.load(hbm(0), [16, 64], "f8e4m3");
      const sa = await tl.load(hbm(8192), [16, 2], "i8");
      const b = await tl.load(hbm(16384), [64, 16], "f4e2m1");
      const sb = await tl.load(hbm(24576), [16, 2], "i8");
      const c = await tl.dotScaled(a, sa, "e4m3", b, sb, "e2m1");
      expect(c.describe()).toBe("handle #4 (f32 [16, 16] in tcm)");
    });
    expect(commands.at(-1)).toEqual({
      kind: "gemm",
      a: scratch(0),
      b: scratch(1024 + 32),
      out: scratch(2048 + 64),
      m: 16,
      n: 16,
      k: 64,
      dtype: "f8e4m3",
      dtypeB: "f4e2m1",
      dtypeAcc: "f32",
      dtypeOut: "f32",
      accumulate: false,
      transposeA: false,
      transposeB: false,
      aScale: scratch(1024),
      bScale: scratch(2048 + 32),
    });
  });

  // pe_gemm_v1 32 x 32, 1 GHz, overhead 8, dispatch 2: 16 passes of 128 + 4 streamed steps at
  // the slower rate. f8e4m3 1 cycle, f4e2m1 0.25: 2 + 16 x 132 x 1 + 8 = 2122 ns (the fp4 rate
  // alone would give 2 + 16 x 132 x 0.25 + 8 = 538 ns); swapped rates give the same 2122 ns.
  it("streams at the slower operand's rate: 2 + 16 x (128 + 4) x max(cycles) + 8 ns", async () => {
    // Each also fetches A, B and their e8m0 scales (33792 B: 67 ns) and stores the f32 result
    // (65536 B: 129 ns) through PE_TCM: 196 ns around the GEMM.
    expect(await mixedNs({ f8e4m3: 1, f4e2m1: 0.25 })).toBeCloseTo(2 + 16 * 132 * 1 + 8 + 196, 6);
    expect(await mixedNs({ f8e4m3: 0.25, f4e2m1: 1 })).toBeCloseTo(2122 + 196, 6);
    expect(await mixedNs({ f8e4m3: 0.5, f4e2m1: 0.5 })).toBeCloseTo(2 + 16 * 132 * 0.5 + 8 + 196, 6);
  });
});
