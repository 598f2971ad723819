import { Tensor } from "@kb/tensor";
import { describe, expect, it } from "vitest";
import { applyMath } from "./math.js";
import { verify } from "./verify.js";

// The narrow (u8, u16, i16) and 64-bit (i64, u64) integer dtypes wrap as Triton's do. 64-bit
// values are exact while |x| <= 2^53; the wrapping itself is exact (BigInt), the result then
// read back as a double. Expectations by hand.

const of = (dtype: "u8" | "u16" | "i16" | "i64" | "u64", values: readonly number[]) =>
  Tensor.fromArray([...values], [values.length], dtype);
const values = (tensor: Tensor) => [...tensor.toFloat64Array()];

describe("narrow integer dtypes wrap", () => {
  it("wraps u8, u16 and i16 add, sub and mul", () => {
    // u8: 250 + 10 = 260 - 256 = 4; 3 - 5 = -2 + 256 = 254; 16 * 17 = 272 - 256 = 16.
    expect(values(applyMath("add", [of("u8", [250])], [1], "u8", null, [10]))).toEqual([4]);
    expect(values(applyMath("sub", [of("u8", [3])], [1], "u8", null, [5]))).toEqual([254]);
    expect(values(applyMath("mul", [of("u8", [16])], [1], "u8", null, [17]))).toEqual([16]);
    // i16: 32767 + 1 = -32768; -32768 - 1 = 32767; 300 * 300 = 90000 - 65536 = 24464.
    expect(values(applyMath("add", [of("i16", [32767])], [1], "i16", null, [1]))).toEqual([-32768]);
    expect(values(applyMath("sub", [of("i16", [-32768])], [1], "i16", null, [1]))).toEqual([32767]);
    expect(values(applyMath("mul", [of("i16", [300])], [1], "i16", null, [300]))).toEqual([24464]);
    // u16: 65535 + 1 = 0; ~0 = 65535; 0x8000 >> 15 = 1 (logical); i16 -32768 >> 15 = -1 (arithmetic).
    expect(values(applyMath("add", [of("u16", [65535])], [1], "u16", null, [1]))).toEqual([0]);
    expect(values(applyMath("not", [of("u16", [0])], [1], "u16", null, []))).toEqual([65535]);
    expect(values(applyMath("shr", [of("u16", [0x8000])], [1], "u16", null, [15]))).toEqual([1]);
    expect(values(applyMath("shr", [of("i16", [-32768])], [1], "i16", null, [15]))).toEqual([-1]);
    // u8 shl drops the top bits: 0x81 << 1 = 0x102 -> 0x02.
    expect(values(applyMath("shl", [of("u8", [0x81])], [1], "u8", null, [1]))).toEqual([2]);
  });
});

describe("64-bit integer dtypes wrap modulo 2^64", () => {
  it("computes i64 beyond 32 bits exactly and wraps at 2^64", () => {
    // 2^40 * 2^12 = 2^52 (past i32, exact in i64); 2^62 * 4 = 2^64 = 0 (mod 2^64);
    // 2^62 * 2 = 2^63 = -2^63 in two's complement.
    expect(values(applyMath("mul", [of("i64", [2 ** 40])], [1], "i64", null, [2 ** 12]))).toEqual([2 ** 52]);
    expect(values(applyMath("mul", [of("i64", [2 ** 62])], [1], "i64", null, [4]))).toEqual([0]);
    expect(values(applyMath("mul", [of("i64", [2 ** 62])], [1], "i64", null, [2]))).toEqual([-(2 ** 63)]);
    // Offsets past 2^32 (a row index times a large stride): 70000 * 100000 + 7 = 7000000007.
    expect(
      values(
        applyMath("fma", [of("i64", [70000]), of("i64", [100000]), of("i64", [7])], [1], "i64", null, []),
      ),
    ).toEqual([7000000007]);
    // -7 / 2 = -3 (toward zero), -7 % 2 = -1.
    expect(values(applyMath("div", [of("i64", [-7])], [1], "i64", null, [2]))).toEqual([-3]);
    expect(values(applyMath("mod", [of("i64", [-7])], [1], "i64", null, [2]))).toEqual([-1]);
  });

  it("does 64-bit bit ops and shifts on all 64 bits", () => {
    // 1 << 40 = 2^40 (a 32-bit shift would give 0 or 256); u64 1 << 63 = 2^63, >> 63 = 1.
    expect(values(applyMath("shl", [of("i64", [1])], [1], "i64", null, [40]))).toEqual([2 ** 40]);
    expect(values(applyMath("shl", [of("u64", [1])], [1], "u64", null, [63]))).toEqual([2 ** 63]);
    expect(values(applyMath("shr", [of("u64", [2 ** 63])], [1], "u64", null, [63]))).toEqual([1]);
    // i64 -2^63 >> 62 = -2 (arithmetic); u64 shifts of 64 or more give 0.
    expect(values(applyMath("shr", [of("i64", [-(2 ** 63)])], [1], "i64", null, [62]))).toEqual([-2]);
    expect(values(applyMath("shl", [of("u64", [1])], [1], "u64", null, [64]))).toEqual([0]);
    // (2^40 + 5) & (2^40 + 3) = 2^40 + 1; 2^33 | 1 = 2^33 + 1; 2^35 ^ 2^35 = 0.
    expect(
      values(applyMath("and", [of("i64", [2 ** 40 + 5]), of("i64", [2 ** 40 + 3])], [1], "i64", null, [])),
    ).toEqual([2 ** 40 + 1]);
    expect(values(applyMath("or", [of("u64", [2 ** 33])], [1], "u64", null, [1]))).toEqual([2 ** 33 + 1]);
    expect(values(applyMath("xor", [of("i64", [2 ** 35])], [1], "i64", null, [2 ** 35]))).toEqual([0]);
    // u64 0 - 1 = 2^64 - 1, stored exactly; it reads back as the nearest double, 2^64.
    const max = applyMath("sub", [of("u64", [0])], [1], "u64", null, [1]);
    expect(new BigUint64Array(max.bytes.buffer, max.bytes.byteOffset, 1)[0]).toBe(2n ** 64n - 1n);
    // ~0 on i64 is -1.
    expect(values(applyMath("not", [of("i64", [0])], [1], "i64", null, []))).toEqual([-1]);
  });
});

describe("float to integer casts truncate toward zero (Triton's fptosi)", () => {
  it("drops the fraction instead of rounding half to even, and saturates", () => {
    const x = Tensor.fromArray([2.5, -2.5, 3.7, -3.7, 1e10, Number.NaN], [6], "f32");
    expect(values(applyMath("cast", [x], [6], "i32", null, []))).toEqual([2, -2, 3, -3, 2147483647, 0]);
    expect(values(applyMath("cast", [x], [6], "i64", null, []))).toEqual([2, -2, 3, -3, 1e10, 0]);
    expect(values(applyMath("cast", [x], [6], "u8", null, []))).toEqual([2, 0, 3, 0, 255, 0]);
  });
});

describe("--verify compares 64-bit integers exactly", () => {
  it("fails outputs that differ only past 2^53, where their doubles are equal", () => {
    // 2^60 and 2^60 + 1 read as the same double; verify compares the stored integers.
    const reference = Tensor.fromArray([2 ** 60, 5], [2], "i64");
    const output = reference.clone();
    new BigInt64Array(output.bytes.buffer, output.bytes.byteOffset, 2)[0] = 2n ** 60n + 1n;
    const report = verify({ c: output }, { c: reference });
    expect(report.pass).toBe(false);
    expect(report.outputs[0]?.mismatches).toBe(1);
    expect(report.outputs[0]?.firstMismatch?.flat).toBe(0);
    expect(verify({ c: reference.clone() }, { c: reference }).pass).toBe(true);
  });
});
