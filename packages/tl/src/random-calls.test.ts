import { describe, expect, it } from "vitest";
import type { TLContext } from "./context.js";
import { machineOf, runKernel, TestMemory } from "./test-support.js";

// tl.randint / tl.rand / tl.randn as Triton's: Philox 4x32-10 of (seed, offsets). Offsets built
// from tl.arange are known in phase 1, so the random tile is too (phase 2 computes the same).
describe("tl.rand, tl.randint, tl.randn", () => {
  it("gives Random123's known answer for seed 0 at offset 0, and one number per offset", async () => {
    const seen: Record<string, number[]> = {};
    let dtypes: string[] = [];
    await runKernel(
      machineOf(),
      async (tl: TLContext) => {
        const offsets = tl.arange(0, 4, "i32");
        const words = await tl.randint(0, offsets);
        const uniform = await tl.rand(0, offsets);
        const normal = await tl.randn(0, offsets);
        seen.words = [...words.data.toFloat64Array()];
        seen.uniform = [...uniform.data.toFloat64Array()];
        seen.normal = [...normal.data.toFloat64Array()];
        dtypes = [words.dtype, uniform.dtype, normal.dtype];
      },
      [],
      { memory: new TestMemory() },
    );
    expect(dtypes).toEqual(["u32", "f32", "f32"]);
    // Philox4x32-10(counter 0, key 0) = 6627e8d5 ... (Random123 kat_vectors).
    expect(seen.words?.[0]).toBe(0x6627e8d5);
    expect(new Set(seen.words).size).toBe(4);
    expect(seen.uniform?.[0]).toBe(Math.fround(Math.fround(0x6627e8d5) * Math.fround(4.6566127342e-10)));
    expect(seen.uniform?.every((u) => u >= 0 && u < 1)).toBe(true);
    expect(seen.normal?.every((n) => Number.isFinite(n))).toBe(true);
  });

  it("refuses a seed that is not an integer, saying so", async () => {
    let message = "";
    await runKernel(
      machineOf(),
      async (tl: TLContext) => {
        try {
          await tl.rand(0.5, tl.arange(0, 4, "i32"));
        } catch (error) {
          message = (error as Error).message;
        }
      },
      [],
      { memory: new TestMemory() },
    );
    expect(message).toContain("tl.rand(seed, offsets): the seed must be an integer");
  });
});
