import { describe, expect, it } from "vitest";
import type { TLContext } from "./context.js";
import { machineOf, runKernel, TestMemory } from "./test-support.js";

// Triton's integer semantics through the tl calls: phase 1 computes index arithmetic on known
// values (`tl.arange`, `tl.full`) with the same wrapping as phase 2.
describe("integer calls (Triton's semantics)", () => {
  it("wraps i32 and u32 arithmetic, shifts and bit ops on known values in phase 1", async () => {
    const seen: Record<string, number[]> = {};
    await runKernel(
      machineOf(),
      async (tl: TLContext) => {
        const big = await tl.full([2], 2147483647, "i32");
        seen.add = [...(await tl.add(big, tl.arange(0, 2, "i32"))).data.toFloat64Array()];
        const x = tl.arange(-3, 1, "i32"); // -3, -2, -1, 0
        seen.div = [...(await tl.div(x, 2)).data.toFloat64Array()];
        seen.mod = [...(await tl.mod(x, 2)).data.toFloat64Array()];
        seen.shr = [...(await tl.shr(x, 1)).data.toFloat64Array()];
        const w = await tl.full([1], 0x9e3779b9, "u32");
        seen.xorShl = [...(await tl.xor(w, await tl.shl(w, 4))).data.toFloat64Array()];
        seen.not = [...(await tl.not(tl.arange(0, 2, "u32"))).data.toFloat64Array()];
      },
      [],
      { memory: new TestMemory() },
    );
    expect(seen.add).toEqual([2147483647, -2147483648]);
    // Truncation toward zero: -3 / 2 = -1, -1 / 2 = 0 (not -2 and -0 rounding half to even).
    expect(seen.div).toEqual([-1, -1, 0, 0]);
    expect(seen.mod).toEqual([-1, 0, -1, 0]);
    expect(seen.shr).toEqual([-2, -1, -1, 0]);
    // 0x9e3779b9 << 4 = 0xe3779b90 (the top nibble falls off); xor 0x9e3779b9 = 0x7d40e229 (9e^e3 = 7d, 37^77 = 40, 79^9b = e2, b9^90 = 29).
    expect(seen.xorShl).toEqual([0x7d40e229]);
    expect(seen.not).toEqual([4294967295, 4294967294]);
  });
});
