import { Tensor } from "@kb/tensor";
import { describe, expect, it } from "vitest";
import type { TLContext } from "./context.js";
import { failure, hbmAt, machineOf, runKernel, TestMemory } from "./test-support.js";

// u8, u16, i16, i64 and u64 through the tl calls: phase 1 computes index arithmetic on them
// with the wrapping phase 2 uses, `.to()` truncates floats toward zero, and i64 offsets feed a
// gather. Expectations by hand.
const numbers = (t: Tensor) => [...t.toFloat64Array()];

describe("integer widths in kernels", () => {
  it("wraps u8, i16 and i64 arithmetic on known values in phase 1", async () => {
    const seen: Record<string, number[]> = {};
    await runKernel(
      machineOf(),
      async (tl: TLContext) => {
        seen.u8 = numbers((await tl.add(await tl.full([2], 250, "u8"), tl.arange(9, 11, "u8"))).data);
        seen.i16 = numbers((await tl.add(await tl.full([1], 32767, "i16"), 1)).data);
        const big = await tl.full([1], 2 ** 62, "i64");
        seen.i64 = numbers((await tl.mul(big, 4)).data);
        seen.shl = numbers((await tl.shl(tl.arange(1, 3, "i64"), 40)).data);
        seen.u64 = numbers((await tl.shr(await tl.shl(await tl.full([1], 1, "u64"), 63), 62)).data);
      },
      [],
      { memory: new TestMemory() },
    );
    // 250 + 9 = 259 - 256 = 3, 250 + 10 = 4; 32767 + 1 = -32768; 2^62 * 4 = 2^64 = 0.
    expect(seen.u8).toEqual([3, 4]);
    expect(seen.i16).toEqual([-32768]);
    expect(seen.i64).toEqual([0]);
    expect(seen.shl).toEqual([2 ** 40, 2 ** 41]);
    // (1 << 63) >> 62 = 2, logical.
    expect(seen.u64).toEqual([2]);
  });

  it("reads a negative operand of a u64 op as its two's complement, as Triton converts -1", async () => {
    const seen: Record<string, number[]> = {};
    await runKernel(
      machineOf(),
      async (tl: TLContext) => {
        const five = await tl.full([1], 5, "u64");
        seen.add = numbers((await tl.add(five, -1)).data);
        seen.and = numbers((await tl.and(five, -1)).data);
        seen.or = numbers((await tl.or(five, -1)).data);
        seen.u32 = numbers((await tl.add(await tl.full([1], 5, "u32"), -1)).data);
      },
      [],
      { memory: new TestMemory() },
    );
    // -1 is 2^64 - 1: 5 + (2^64 - 1) wraps to 4; 5 & (2^64 - 1) = 5; 5 | (2^64 - 1) = 2^64 - 1,
    // read as its nearest double 2^64. u32 wraps the same way: 5 + (2^32 - 1) = 4.
    expect(seen.add).toEqual([4]);
    expect(seen.and).toEqual([5]);
    expect(seen.or).toEqual([2 ** 64]);
    expect(seen.u32).toEqual([4]);
  });

  it("truncates floats toward zero in .to() of an integer dtype", async () => {
    let got: number[] = [];
    await runKernel(
      machineOf(),
      async (tl: TLContext) => {
        const x = await tl.mul(await tl.arange(-3, 3, "i32").to("f32"), 0.75); // -2.25 -1.5 -0.75 0 0.75 1.5
        got = numbers((await x.to("i64")).data);
      },
      [],
      { memory: new TestMemory() },
    );
    expect(got).toEqual([-2, -1, 0, 0, 0, 1]);
  });

  it("gathers through i64 offsets computed from loaded ids", async () => {
    const memory = new TestMemory();
    // f32 at HBM 0: value k at element k; i32 ids at 8192.
    memory.write(
      hbmAt(0),
      Tensor.fromArray(
        Array.from({ length: 64 }, (_, k) => k),
        [64],
        "f32",
      ).bytes,
    );
    memory.write(hbmAt(8192), Tensor.fromArray([5, 2], [2], "i32").bytes);
    let got: number[] = [];
    await runKernel(
      machineOf(),
      async (tl: TLContext) => {
        const ids = (await tl.load(hbmAt(8192), [2, 1], "i32")).to("i64");
        const offs = await tl.add(await tl.mul(await ids, 8), tl.reshape(tl.arange(0, 2, "i64"), [1, 2]));
        got = numbers((await tl.load(hbmAt(0), [2, 2], "f32", { offsets: offs })).data);
      },
      [],
      { memory },
    );
    expect(got).toEqual([40, 41, 16, 17]);
  });

  it("refuses a dot of i64 operands with a clear message", async () => {
    const error = await failure(
      runKernel(
        machineOf(),
        async (tl: TLContext) => {
          const a = await tl.full([16, 16], 1, "i64");
          await tl.dot(a, a);
        },
        [],
        { memory: new TestMemory() },
      ),
    );
    expect(error.code).toBe("TL_INVALID_CALL");
    expect(error.detail).toMatch(/PE_GEMM has no i64 operands.*cast them to i8/);
  });
});
