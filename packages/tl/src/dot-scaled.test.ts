import { describe, expect, it } from "vitest";
import type { TLContext } from "./context.js";
import { endNs, failure, hbmAt as hbm, listCommands as list, scratchAt as scratch } from "./test-support.js";

const TILE = [128, 128];

// Hand-computed on the schema's default machine: pe_cpu dispatch 2 ns, pe_gemm_v1 32 x 32 MACs,
// overhead 8 cycles, 1 GHz, dtype_cycles f16 1, f8e4m3, f8e5m2 and f4e2m1 0.5
// (docs/latency-model.md). A 128 x 128 x 128 dot is ceil(128/32)^2 = 16 passes of k steps.
describe("fp8 and fp4 GEMMs run at the GEMM unit's fp8 and fp4 rates", { timeout: 60_000 }, () => {
  const dotNs = async (dtype: "f16" | "f8e4m3" | "f8e5m2" | "f4e2m1") => {
    const loads = async (tl: TLContext) => [
      await tl.load(hbm(0), TILE, dtype),
      await tl.load(hbm(65536), TILE, dtype),
    ];
    const before = await endNs(async (tl) => {
      await loads(tl);
    });
    const after = await endNs(async (tl) => {
      const [a, b] = await loads(tl);
      await tl.dot(a!, b!);
    });
    return after - before;
  };

  it("tl.dot of f8e4m3 tiles: 2 + 16 x 128 x 0.5 + 8 = 1034 ns (f16: 2058 ns), plus fetch and store", async () => {
    // Around the GEMM, PE_TCM (1 ns + B / 512 GB/s): the f16 operands' fetch 65536 B (129 ns),
    // the 1-byte ones' 32768 B (65 ns); the f32 result's store 65536 B (129 ns).
    expect(await dotNs("f16")).toBeCloseTo(2 + 129 + 16 * 128 * 1 + 8 + 129, 6);
    expect(await dotNs("f8e4m3")).toBeCloseTo(2 + 65 + 16 * 128 * 0.5 + 8 + 129, 6);
    expect(await dotNs("f8e5m2")).toBeCloseTo(1034 + 65 + 129, 6);
    expect(await dotNs("f4e2m1")).toBeCloseTo(1034 + 65 + 129, 6);
  });

  it("tl.dot of fp8 operands accumulates in f32", async () => {
    const commands = await list(async (tl) => {
      const a = await tl.load(hbm(0), [16, 32], "f8e4m3");
      const b = await tl.load(hbm(4096), [32, 16], "f8e4m3");
      const c = await tl.dot(a, b);
      expect(c.dtype).toBe("f32");
    });
    expect(commands.at(-1)).toMatchObject({
      kind: "gemm",
      dtype: "f8e4m3",
      dtypeAcc: "f32",
      dtypeOut: "f32",
    });
  });
});

describe("tl.dotScaled", { timeout: 60_000 }, () => {
  it("is one GEMM command carrying the scales' TCM addresses", async () => {
    const commands = await list(async (tl) => {
      const a = await tl.load(hbm(0), [16, 64], "f8e4m3");
      const sa = await tl.load(hbm(8192), [16, 2], "i8");
      const b = await tl.load(hbm(16384), [64, 16], "f8e4m3");
      const sb = await tl.load(hbm(24576), [16, 2], "i8");
      const c = await tl.dotScaled(a, sa, "e4m3", b, sb, "e4m3");
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
      dtypeAcc: "f32",
      dtypeOut: "f32",
      accumulate: false,
      transposeA: false,
      transposeB: false,
      aScale: scratch(1024),
      bScale: scratch(2048 + 32),
    });
  });

  // The scaled GEMM streams k + ceil(k / 32) steps: 2 + 16 x (128 + 4) x 0.5 + 8 = 1066 ns.
  it("is timed at the fp8 rate plus one streamed step per block of 32 along K", async () => {
    const loads = async (tl: TLContext) => ({
      a: await tl.load(hbm(0), TILE, "f8e4m3"),
      sa: await tl.load(hbm(32768), [128, 4], "i8"),
      b: await tl.load(hbm(65536), TILE, "f8e4m3"),
      sb: await tl.load(hbm(98304), [128, 4], "i8"),
    });
    const before = await endNs(async (tl) => {
      await loads(tl);
    });
    const after = await endNs(async (tl) => {
      const { a, sa, b, sb } = await loads(tl);
      await tl.dotScaled(a, sa, "e4m3", b, sb, "e4m3");
    });
    // Plus the fetch of A, B and 2 x 128 x 4 scale bytes (33792 B: 67 ns) and the f32 store (129 ns).
    expect(after - before).toBeCloseTo(2 + 16 * (128 + 4) * 0.5 + 8 + 67 + 129, 6);
  });

  it("refuses a format that does not match the elements, mixed formats, and misshapen scales", async () => {
    const call = (body: (tl: TLContext) => Promise<unknown>) =>
      failure(
        list(async (tl) => {
          await body(tl);
        }),
      );
    const fp8 = async (tl: TLContext) => ({
      a: await tl.load(hbm(0), [16, 64], "f8e4m3"),
      b: await tl.load(hbm(4096), [64, 16], "f8e4m3"),
      s: await tl.load(hbm(8192), [16, 2], "i8"),
    });
    const wrongFormat = await call(async (tl) => {
      const { a, b, s } = await fp8(tl);
      await tl.dotScaled(a, s, "e5m2", b, s, "e5m2");
    });
    expect(wrongFormat.code).toBe("TL_INVALID_CALL");
    expect(wrongFormat.message).toMatch(/dot-scaled\.test\.ts:\d+:\d+ kernel k on sip0\.cube0\.pe0/);
    expect(wrongFormat.message).toContain(
      'tl.dotScaled: a handle #0 (f8e4m3 [16, 64] in tcm) holds f8e4m3, but format "e5m2" is f8e5m2 elements',
    );
    const mixedFloat = await call(async (tl) => {
      const { a, s } = await fp8(tl);
      const b = await tl.load(hbm(12288), [64, 16], "f16");
      await tl.dotScaled(a, s, "e4m3", b, null, "fp16");
    });
    expect(mixedFloat.message).toContain(
      'tl.dotScaled: "e4m3" x "fp16": PE_GEMM mixes only the narrow formats (e4m3, e5m2, e2m1)',
    );
    const shape = await call(async (tl) => {
      const { a, b } = await fp8(tl);
      const s = await tl.load(hbm(8192), [16, 4], "i8");
      await tl.dotScaled(a, s, "e4m3", b, null, "e4m3");
    });
    expect(shape.message).toContain("tl.dotScaled: aScale handle #3 (i8 [16, 4] in tcm) must be [16, 2]");
    const floatScale = await call(async (tl) => {
      const { a, b } = await fp8(tl);
      const s = await tl.load(hbm(8192), [16, 2], "f16");
      await tl.dotScaled(a, null, "e4m3", b, s, "e4m3");
    });
    expect(floatScale.message).toContain("must hold e8m0 bytes in a 1-byte integer tensor");
    const halfNv = await call(async (tl) => {
      const a = await tl.load(hbm(0), [16, 64], "f4e2m1");
      const b = await tl.load(hbm(4096), [64, 16], "f4e2m1");
      const sa = await tl.load(hbm(8192), [16, 4], "f8e4m3");
      const sb = await tl.load(hbm(12288), [16, 2], "u8");
      await tl.dotScaled(a, sa, "e2m1", b, sb, "e2m1");
    });
    expect(halfNv.message).toContain(
      "tl.dotScaled: aScale handle #2 (f8e4m3 [16, 4] in tcm) holds f8e4m3 scales (nvfp4) but bScale handle #3 (u8 [16, 2] in tcm) does not: one GEMM takes one kind of scale",
    );
    const nvFp8 = await call(async (tl) => {
      const { a, b } = await fp8(tl);
      const s = await tl.load(hbm(8192), [16, 4], "f8e4m3");
      await tl.dotScaled(a, s, "e4m3", b, null, "e4m3");
    });
    expect(nvFp8.message).toContain(
      'tl.dotScaled: aScale handle #3 (f8e4m3 [16, 4] in tcm) holds f8e4m3 scales, which nvfp4 pairs only with "e2m1" elements',
    );
    const nvShape = await call(async (tl) => {
      const a = await tl.load(hbm(0), [16, 64], "f4e2m1");
      const b = await tl.load(hbm(4096), [64, 16], "f4e2m1");
      const s = await tl.load(hbm(8192), [16, 2], "f8e4m3");
      await tl.dotScaled(a, s, "e2m1", b, null, "e2m1");
    });
    expect(nvShape.message).toContain(
      "tl.dotScaled: aScale handle #2 (f8e4m3 [16, 2] in tcm) must be [16, 4] (one scale per 16 elements along K",
    );
  });

  // Triton's nvfp4 (tutorial 10's default): e2m1 elements, f8e4m3 scales per 16 along K. The
  // command names the scales' dtype; PE_GEMM streams k + ceil(k / 16) steps at the fp4 rate:
  // 2 + 16 x (128 + 8) x 0.5 + 8 = 1098 ns.
  it("takes nvfp4: f8e4m3 scales per 16 along K, timed with one streamed step per block of 16", async () => {
    const commands = await list(async (tl) => {
      const a = await tl.load(hbm(0), [16, 64], "f4e2m1");
      const sa = await tl.load(hbm(8192), [16, 4], "f8e4m3");
      const b = await tl.load(hbm(16384), [64, 16], "f4e2m1");
      const sb = await tl.load(hbm(24576), [16, 4], "f8e4m3");
      await tl.dotScaled(a, sa, "e2m1", b, sb, "e2m1");
    });
    expect(commands.at(-1)).toMatchObject({
      kind: "gemm",
      dtype: "f4e2m1",
      aScale: scratch(1024),
      bScale: scratch(2048 + 64),
      scaleDtype: "f8e4m3",
    });
    const loads = async (tl: TLContext) => ({
      a: await tl.load(hbm(0), TILE, "f4e2m1"),
      sa: await tl.load(hbm(32768), [128, 8], "f8e4m3"),
      b: await tl.load(hbm(65536), TILE, "f4e2m1"),
      sb: await tl.load(hbm(98304), [128, 8], "f8e4m3"),
    });
    const before = await endNs(async (tl) => {
      await loads(tl);
    });
    const after = await endNs(async (tl) => {
      const { a, sa, b, sb } = await loads(tl);
      await tl.dotScaled(a, sa, "e2m1", b, sb, "e2m1");
    });
    // Plus the fetch of A, B and 2 x 128 x 8 scale bytes (34816 B: 69 ns) and the f32 store (129 ns).
    expect(after - before).toBeCloseTo(2 + 16 * (128 + 8) * 0.5 + 8 + 69 + 129, 6);
  });
});
