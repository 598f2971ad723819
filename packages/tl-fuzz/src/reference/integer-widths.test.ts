import { describe, expect, it } from "vitest";
import { bits } from "./bits.js";
import { binary, cast, fma } from "./elementwise.js";
import { tensor } from "./tensor.js";

// The evaluator's u8, u16, i16, i64 and u64 (packages/tl/README.md, "Dtypes and rounding" and
// "Integer arithmetic wraps"), with hand-computed values.
const values = (t: { data: Float64Array }) => [...t.data];

describe("integer widths in the evaluator", () => {
  it("wraps the narrow widths", () => {
    expect(values(binary("add", tensor([250], [1], "u8"), 10))).toEqual([4]);
    expect(values(binary("add", tensor([32767], [1], "i16"), 1))).toEqual([-32768]);
    expect(values(binary("sub", tensor([0], [1], "u16"), 1))).toEqual([65535]);
    expect(values(bits("shr", tensor([-32768], [1], "i16"), 15))).toEqual([-1]);
    expect(values(bits("not", tensor([0], [1], "u8")))).toEqual([255]);
  });

  it("wraps i64 and u64 modulo 2^64, exactly", () => {
    expect(values(binary("mul", tensor([2 ** 62], [1], "i64"), 4))).toEqual([0]);
    expect(values(binary("mul", tensor([2 ** 62], [1], "i64"), 2))).toEqual([-(2 ** 63)]);
    expect(values(bits("shl", tensor([1], [1], "u64"), 63))).toEqual([2 ** 63]);
    expect(values(bits("shr", tensor([2 ** 63], [1], "u64"), 63))).toEqual([1]);
    expect(values(bits("and", tensor([2 ** 40 + 5], [1], "i64"), tensor([2 ** 40 + 3], [1], "i64")))).toEqual(
      [2 ** 40 + 1],
    );
    // u64 2^64 (the double 2^64 - 1 reads as) counts as 2^64 - 1: plus 1 wraps to 0.
    expect(values(binary("add", tensor([2 ** 64], [1], "u64"), 1))).toEqual([0]);
    // fma on i64 is exact past 32 bits: 442413 · 442413 + 13 = 195729262582.
    const x = tensor([442413], [1], "i64");
    expect(values(fma(x, x, tensor([13], [1], "i64")))).toEqual([195729262582]);
    // The same on the right of a bit op: i64 2^63 (the largest value's double) & itself is itself.
    const top = tensor([2 ** 63], [1], "i64");
    expect(values(bits("and", top, top))).toEqual([2 ** 63]);
  });

  it("reads a negative number operand of an unsigned op as its two's complement", () => {
    // 3 / (2^64 - 3) = 0 (the 10k fuzz found 2^64 - 1: -3 read as signed, the quotient -1 wrapped).
    expect(values(binary("div", tensor([0, 3], [2], "u64"), -3))).toEqual([0, 0]);
    // u32: 7 % (2^32 - 3) = 7; 5 + (2^32 - 1) wraps to 4.
    expect(values(binary("mod", tensor([7], [1], "u32"), -3))).toEqual([7]);
    expect(values(binary("add", tensor([5], [1], "u32"), -1))).toEqual([4]);
  });

  it("truncates toward zero in a cast to an integer dtype", () => {
    const x = tensor([2.7, -2.7, 300.5, Number.NaN], [4], "f32");
    expect(values(cast(x, "i16"))).toEqual([2, -2, 300, 0]);
    expect(values(cast(x, "u8"))).toEqual([2, 0, 255, 0]);
  });
});
