import { describe, expect, it } from "vitest";
import type { TLContext } from "./context.js";
import { machineOf, runKernel, TestMemory } from "./test-support.js";

// tl.cumprod on integer tensors wraps as Triton's integer multiply (LLVM `mul`: the product
// modulo 2^bits, two's complement), step by step, exactly: a product past 2^53 is not rounded
// through a double before it wraps. Expectations by hand (Python's exact integers, then modulo).
const run = (kernel: (tl: TLContext) => Promise<void>) =>
  runKernel(machineOf(), kernel, [], { memory: new TestMemory() });

describe("tl.cumprod on integers", () => {
  it("i32: [100000, 100001, 100002, 100003] gives the products modulo 2^32", async () => {
    let values: number[] = [];
    let dtype = "";
    await run(async (tl) => {
      const x = tl.arange(100000, 100004, "i32");
      const p = await tl.cumprod(x);
      dtype = p.dtype;
      values = [...p.data.toFloat64Array()];
    });
    expect(dtype).toBe("i32");
    // 100000; 10000100000 - 2 x 2^32 = 1410165408; then -1595066048 and -599592000 (the exact
    // products 1.0000300002e15 and 1.00006000110000600e20 modulo 2^32, signed).
    expect(values).toEqual([100000, 1410165408, -1595066048, -599592000]);
  });

  it("u8 and i8 wrap at 8 bits", async () => {
    const out: number[][] = [];
    await run(async (tl) => {
      out.push([...(await tl.cumprod(tl.arange(15, 18, "u8"))).data.toFloat64Array()]);
      out.push([...(await tl.cumprod(tl.arange(9, 12, "i8"))).data.toFloat64Array()]);
    });
    // u8: 15, 15 x 16 = 240, 240 x 17 = 4080 = 15 x 256 + 240 -> 240.
    expect(out[0]).toEqual([15, 240, 240]);
    // i8: 9, 90, 90 x 11 = 990 = 3 x 256 + 222 -> 222 - 256 = -34.
    expect(out[1]).toEqual([9, 90, -34]);
  });
});
