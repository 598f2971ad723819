import { Tensor } from "@kb/tensor";
import { describe, expect, it } from "vitest";
import { applyMath } from "./math.js";

// Integer arithmetic as Triton's: wrapping (two's complement), truncating division, the
// dividend's sign for `mod`, arithmetic / logical shifts, unsigned u32. Expectations by hand.

const i32 = (values: readonly number[]) => Tensor.fromArray([...values], [values.length], "i32");
const u32 = (values: readonly number[]) => Tensor.fromArray([...values], [values.length], "u32");
const i8 = (values: readonly number[]) => Tensor.fromArray([...values], [values.length], "i8");
const values = (tensor: Tensor) => [...tensor.toFloat64Array()];
const MAX = 2147483647;
const MIN = -2147483648;

describe("integer math wraps as Triton's does", () => {
  it("wraps i32 add, sub and mul modulo 2^32 instead of saturating", () => {
    expect(values(applyMath("add", [i32([MAX, MIN])], [2], "i32", null, [1]))).toEqual([MIN, MIN + 1]);
    expect(values(applyMath("sub", [i32([MIN])], [1], "i32", null, [1]))).toEqual([MAX]);
    // 65536 * 65536 = 2^32 -> 0; 0x9E3779B9 * 3 low word: 0x9E3779B9 = -1640531527, times 3 =
    // -4921594581 = -4921594581 + 2 * 2^32 = 3668340011 -> 3668340011 - 2^32 = -626627285.
    expect(
      values(applyMath("mul", [i32([65536, -1640531527]), i32([65536, 3])], [2], "i32", null, [])),
    ).toEqual([0, -626627285]);
    // 100 * 3 = 300 = 256 + 44 in i8.
    expect(values(applyMath("mul", [i8([100])], [1], "i8", null, [3]))).toEqual([44]);
  });

  it("truncates integer division toward zero, and mod takes the dividend's sign", () => {
    // Not round half to even: 7 / 2 = 3, -7 / 2 = -3, 5 / 2 = 2, -5 / 3 = -1.
    expect(values(applyMath("div", [i32([7, -7, 5, -5]), i32([2, 2, 2, 3])], [4], "i32", null, []))).toEqual([
      3, -3, 2, -1,
    ]);
    expect(
      values(applyMath("mod", [i32([7, -7, 7, -7]), i32([3, 3, -3, -3])], [4], "i32", null, [])),
    ).toEqual([1, -1, 1, -1]);
    // MIN / -1 wraps to MIN; x / 0 is -1 (all bits), x % 0 is x.
    expect(values(applyMath("div", [i32([MIN, 5]), i32([-1, 0])], [2], "i32", null, []))).toEqual([MIN, -1]);
    expect(values(applyMath("mod", [i32([5])], [1], "i32", null, [0]))).toEqual([5]);
  });

  it("shifts arithmetically on signed, logically on unsigned dtypes; amounts past the width shift all out", () => {
    expect(values(applyMath("shr", [i32([MIN, -1, -8])], [3], "i32", null, [31]))).toEqual([-1, -1, -1]);
    expect(values(applyMath("shr", [u32([2147483648, 4294967295])], [2], "u32", null, [31]))).toEqual([1, 1]);
    expect(values(applyMath("shl", [u32([1, 3])], [2], "u32", null, [31]))).toEqual([2147483648, 2147483648]);
    expect(values(applyMath("shl", [i32([1, 1])], [2], "i32", null, [32]))).toEqual([0, 0]);
    expect(values(applyMath("shr", [i32([-5, 5])], [2], "i32", null, [40]))).toEqual([-1, 0]);
    expect(values(applyMath("shr", [i32([-5])], [1], "i32", null, [-1]))).toEqual([-1]);
  });

  it("computes u32 bitwise ops on the unsigned word", () => {
    // ~0 = 0xffffffff; 0xf0f0f0f0 ^ 0xffffffff = 0x0f0f0f0f; 0x80000000 | 1.
    expect(values(applyMath("not", [u32([0])], [1], "u32", null, []))).toEqual([4294967295]);
    expect(values(applyMath("xor", [u32([0xf0f0f0f0]), u32([0xffffffff])], [1], "u32", null, []))).toEqual([
      0x0f0f0f0f,
    ]);
    expect(values(applyMath("or", [u32([0x80000000])], [1], "u32", null, [1]))).toEqual([0x80000001]);
    // u32 add wraps: 0xffffffff + 2 = 1; sub below 0 wraps up.
    expect(values(applyMath("add", [u32([0xffffffff])], [1], "u32", null, [2]))).toEqual([1]);
    expect(values(applyMath("sub", [u32([0])], [1], "u32", null, [1]))).toEqual([4294967295]);
    // ~5 on i32 is -6.
    expect(values(applyMath("not", [i32([5])], [1], "i32", null, []))).toEqual([-6]);
  });

  it("wraps integer sums, and keeps the f64 rounding for a non-integer scalar", () => {
    expect(values(applyMath("sum", [i32([MAX, 1, 1])], [1], "i32", -1, []))).toEqual([MIN + 1]);
    // mul(x, 0.5) on i32 is round_i32(x * 0.5) (half to even), as before: 3 * 0.5 = 1.5 -> 2.
    expect(values(applyMath("mul", [i32([3, 5])], [2], "i32", null, [0.5]))).toEqual([2, 2]);
  });
});
