import { describe, expect, it } from "vitest";
import { bf16BitsToF32, f16BitsToF32, f32ToBf16Bits, f32ToF16Bits, roundToDtype, Tensor } from "./index.js";

const hex = (bits: number): string => `0x${bits.toString(16).padStart(4, "0")}`;

describe("f32ToF16Bits (a double rounded to the nearest binary16, ties to even)", () => {
  it("rounds ordinary values", () => {
    expect(hex(f32ToF16Bits(1))).toBe("0x3c00");
    expect(hex(f32ToF16Bits(-2))).toBe("0xc000");
    // 1/3 = 1.0101010101|0101...b * 2^-2: exponent 13, fraction 0x155, the rest below half.
    expect(hex(f32ToF16Bits(1 / 3))).toBe("0x3555");
    expect(hex(f32ToF16Bits(0.1))).toBe("0x2e66");
  });

  it("breaks ties to even", () => {
    // 1 + 2^-11 is halfway between 1 (0x3c00) and 1 + 2^-10 (0x3c01): the even one wins.
    expect(hex(f32ToF16Bits(1 + 2 ** -11))).toBe("0x3c00");
    // 1 + 3 * 2^-11 is halfway between 0x3c01 and 0x3c02.
    expect(hex(f32ToF16Bits(1 + 3 * 2 ** -11))).toBe("0x3c02");
    expect(hex(f32ToF16Bits(-(1 + 3 * 2 ** -11)))).toBe("0xbc02");
  });

  it("rounds the double directly, not through binary32 (no double rounding)", () => {
    const x = 1 + 2 ** -11 + 2 ** -40; // just above the tie of 1 and 1 + 2^-10
    expect(Math.fround(x)).toBe(1 + 2 ** -11); // binary32 would make it the tie itself ...
    expect(hex(f32ToF16Bits(Math.fround(x)))).toBe("0x3c00"); // ... which rounds down to even
    expect(hex(f32ToF16Bits(x))).toBe("0x3c01"); // the double is nearer 1 + 2^-10
  });

  it("overflows to infinity from 65520 (halfway to 2^16) up", () => {
    expect(hex(f32ToF16Bits(65504))).toBe("0x7bff"); // the largest finite binary16
    expect(hex(f32ToF16Bits(65519.99))).toBe("0x7bff");
    expect(hex(f32ToF16Bits(65520))).toBe("0x7c00"); // the tie rounds to even: 0x7c00 is Inf
    expect(hex(f32ToF16Bits(-65520))).toBe("0xfc00");
    expect(hex(f32ToF16Bits(1e300))).toBe("0x7c00");
    expect(hex(f32ToF16Bits(Number.POSITIVE_INFINITY))).toBe("0x7c00");
    expect(hex(f32ToF16Bits(Number.NEGATIVE_INFINITY))).toBe("0xfc00");
  });

  it("rounds subnormals at their own precision and underflows to signed zero", () => {
    expect(hex(f32ToF16Bits(2 ** -14))).toBe("0x0400"); // smallest normal
    expect(hex(f32ToF16Bits(2 ** -24))).toBe("0x0001"); // smallest subnormal
    expect(hex(f32ToF16Bits(2 ** -25))).toBe("0x0000"); // halfway between 0 and 2^-24: even is 0
    expect(hex(f32ToF16Bits(2 ** -25 * 1.5))).toBe("0x0001");
    expect(hex(f32ToF16Bits(3 * 2 ** -25))).toBe("0x0002"); // halfway between 1 and 2 units: 2
    expect(hex(f32ToF16Bits(-(2 ** -25)))).toBe("0x8000");
    expect(hex(f32ToF16Bits(2 ** -14 - 2 ** -26))).toBe("0x0400"); // rounds up into the normals
    expect(hex(f32ToF16Bits(5e-324))).toBe("0x0000"); // a double subnormal
  });

  it("keeps the sign of zero and makes every NaN the quiet NaN 0x7e00", () => {
    expect(hex(f32ToF16Bits(0))).toBe("0x0000");
    expect(hex(f32ToF16Bits(-0))).toBe("0x8000");
    expect(hex(f32ToF16Bits(Number.NaN))).toBe("0x7e00");
    expect(hex(f32ToF16Bits(-Number.NaN))).toBe("0x7e00");
  });
});

describe("f16BitsToF32", () => {
  it("decodes normals, subnormals, zeros, infinities and NaNs", () => {
    expect(f16BitsToF32(0x3c00)).toBe(1);
    expect(f16BitsToF32(0x3555)).toBe(0.333251953125);
    expect(f16BitsToF32(0x7bff)).toBe(65504);
    expect(f16BitsToF32(0x0001)).toBe(2 ** -24);
    expect(f16BitsToF32(0x03ff)).toBe(1023 * 2 ** -24);
    expect(Object.is(f16BitsToF32(0x8000), -0)).toBe(true);
    expect(f16BitsToF32(0x7c00)).toBe(Number.POSITIVE_INFINITY);
    expect(f16BitsToF32(0xfc00)).toBe(Number.NEGATIVE_INFINITY);
    expect(f16BitsToF32(0x7c01)).toBeNaN();
    expect(f16BitsToF32(0xfe00)).toBeNaN();
  });

  it("gives every pattern the value of the IEEE formula", () => {
    for (let bits = 0; bits < 0x10000; bits++) {
      const sign = bits & 0x8000 ? -1 : 1;
      const exponent = (bits >>> 10) & 0x1f;
      const fraction = bits & 0x3ff;
      const value = f16BitsToF32(bits);
      if (exponent === 0x1f) {
        if (fraction === 0) expect(value).toBe(sign * Number.POSITIVE_INFINITY);
        else expect(value).toBeNaN();
      } else {
        const expected =
          exponent === 0 ? sign * fraction * 2 ** -24 : sign * (1024 + fraction) * 2 ** (exponent - 25);
        if (value !== expected || Object.is(value, -0) !== Object.is(expected, -0)) {
          throw new Error(`0x${bits.toString(16)} decodes to ${value}, expected ${expected}`);
        }
      }
    }
  });

  it("round-trips every one of the 65536 patterns (NaNs as NaN)", () => {
    for (let bits = 0; bits < 0x10000; bits++) {
      const value = f16BitsToF32(bits);
      const back = f32ToF16Bits(value);
      const ok = Number.isNaN(value) ? back === 0x7e00 && Number.isNaN(f16BitsToF32(back)) : back === bits;
      if (!ok) throw new Error(`0x${bits.toString(16)} -> ${value} -> 0x${back.toString(16)}`);
    }
  });
});

describe("f32ToBf16Bits (a double rounded to the nearest bfloat16, ties to even)", () => {
  it("rounds ordinary values and breaks ties to even", () => {
    expect(hex(f32ToBf16Bits(1))).toBe("0x3f80");
    expect(hex(f32ToBf16Bits(-2))).toBe("0xc000");
    // 1/3 = 1.0101010|1010...b * 2^-2: exponent 125, fraction 0x2a, the rest above half: up.
    expect(hex(f32ToBf16Bits(1 / 3))).toBe("0x3eab");
    expect(hex(f32ToBf16Bits(1 + 2 ** -8))).toBe("0x3f80"); // halfway between 0x3f80 and 0x3f81
    expect(hex(f32ToBf16Bits(1 + 3 * 2 ** -8))).toBe("0x3f82"); // halfway between 0x3f81 and 0x3f82
  });

  it("rounds the double directly, not through binary32", () => {
    const x = 1 + 2 ** -8 + 2 ** -30;
    expect(Math.fround(x)).toBe(1 + 2 ** -8);
    expect(hex(f32ToBf16Bits(x))).toBe("0x3f81");
  });

  it("overflows to infinity from (2 - 2^-8) * 2^127 up, so the largest binary32 is Inf", () => {
    // The largest finite bfloat16 is 0x7f7f = (2 - 2^-7) * 2^127; halfway to 2^128 is
    // (2 - 2^-8) * 2^127, a tie that goes to the even neighbour 0x7f80 = Inf. The largest binary32,
    // (2 - 2^-23) * 2^127, is above that halfway point.
    expect(hex(f32ToBf16Bits((2 - 2 ** -7) * 2 ** 127))).toBe("0x7f7f");
    expect(hex(f32ToBf16Bits((2 - 2 ** -8 - 2 ** -20) * 2 ** 127))).toBe("0x7f7f");
    expect(hex(f32ToBf16Bits((2 - 2 ** -8) * 2 ** 127))).toBe("0x7f80");
    expect(hex(f32ToBf16Bits(3.4028234663852886e38))).toBe("0x7f80");
    expect(hex(f32ToBf16Bits(-3.4028234663852886e38))).toBe("0xff80");
  });

  it("handles subnormals, signed zeros and NaN", () => {
    expect(hex(f32ToBf16Bits(2 ** -126))).toBe("0x0080"); // smallest normal
    expect(hex(f32ToBf16Bits(2 ** -133))).toBe("0x0001"); // smallest subnormal
    expect(hex(f32ToBf16Bits(2 ** -134))).toBe("0x0000"); // the tie with 0
    expect(hex(f32ToBf16Bits(2 ** -134 * 1.5))).toBe("0x0001");
    expect(hex(f32ToBf16Bits(-0))).toBe("0x8000");
    expect(hex(f32ToBf16Bits(Number.NaN))).toBe("0x7fc0");
    expect(hex(f32ToBf16Bits(Number.NEGATIVE_INFINITY))).toBe("0xff80");
  });
});

describe("bf16BitsToF32", () => {
  it("is the binary32 with these bits on top, for all 65536 patterns, and round-trips", () => {
    const view = new DataView(new ArrayBuffer(4));
    for (let bits = 0; bits < 0x10000; bits++) {
      view.setUint32(0, bits << 16, true);
      const expected = view.getFloat32(0, true);
      const value = bf16BitsToF32(bits);
      const back = f32ToBf16Bits(value);
      const ok = Number.isNaN(expected)
        ? Number.isNaN(value) && back === 0x7fc0
        : Object.is(value, expected) && back === bits;
      if (!ok) throw new Error(`0x${bits.toString(16)} -> ${value} -> 0x${back.toString(16)}`);
    }
  });
});

describe("roundToDtype", () => {
  it("rounds floats to the stored value", () => {
    expect(roundToDtype(0.1, "f32")).toBe(Math.fround(0.1));
    expect(roundToDtype(1e39, "f32")).toBe(Number.POSITIVE_INFINITY);
    expect(roundToDtype(1 / 3, "f16")).toBe(0.333251953125);
    expect(roundToDtype(1 / 3, "bf16")).toBe(0.333984375);
    expect(roundToDtype(70000, "f16")).toBe(Number.POSITIVE_INFINITY);
    expect(roundToDtype(Number.NaN, "bf16")).toBeNaN();
  });

  it("rounds integers half to even", () => {
    expect([0.5, 1.5, 2.5, 3.5, -0.5, -1.5, -2.5, -3.5].map((x) => roundToDtype(x, "i8"))).toEqual([
      0, 2, 2, 4, 0, -2, -2, -4,
    ]);
    expect([2.4999, 2.5001, -2.5001].map((x) => roundToDtype(x, "i32"))).toEqual([2, 3, -3]);
    expect(Object.is(roundToDtype(-0.4, "i8"), 0)).toBe(true);
    expect(Object.is(roundToDtype(-0, "i32"), 0)).toBe(true);
  });

  it("saturates integers to the type's range and stores NaN as 0", () => {
    expect([127.4, 127.5, 300, -128.5, -1e9].map((x) => roundToDtype(x, "i8"))).toEqual([
      127, 127, 127, -128, -128,
    ]);
    expect(roundToDtype(Number.POSITIVE_INFINITY, "i8")).toBe(127);
    expect(roundToDtype(Number.NEGATIVE_INFINITY, "i8")).toBe(-128);
    expect(roundToDtype(2147483647.5, "i32")).toBe(2147483647);
    expect(roundToDtype(-2147483648.5, "i32")).toBe(-2147483648);
    expect(roundToDtype(1e20, "i32")).toBe(2147483647);
    expect(roundToDtype(Number.NaN, "i8")).toBe(0);
    expect(roundToDtype(Number.NaN, "i32")).toBe(0);
  });

  it("stores i1 as x != 0: 0 for ±0, 1 for anything else, NaN included", () => {
    expect(
      [0, -0, 1, -2, 0.25, Number.NaN, Number.NEGATIVE_INFINITY].map((x) => roundToDtype(x, "i1")),
    ).toEqual([0, 0, 1, 1, 1, 1, 1]);
    const mask = Tensor.fromArray([0, 3, -0.5, 0], [4], "i1");
    expect([...mask.bytes]).toEqual([0, 1, 1, 0]); // one byte per element
    expect([...mask.toFloat64Array()]).toEqual([0, 1, 1, 0]);
    mask.setFlat(0, Number.NaN);
    expect(mask.getFlat(0)).toBe(1);
    expect(
      [...Tensor.random([64], "i1", { seed: 3 }).toFloat64Array()].every((v) => v === 0 || v === 1),
    ).toBe(true);
  });

  it("rejects an unknown dtype", () => {
    expect(() => roundToDtype(1, "f64" as never)).toThrow(
      '[TENSOR_INVALID] expected a dtype (f32, f16, bf16, i8, i32, i1, u32, u8, u16, i16, i64, u64, f8e4m3, f8e5m2, f4e2m1), got "f64".',
    );
  });
});

describe("u32", () => {
  it("holds the unsigned words: rounds half to even and saturates to [0, 2^32 - 1] like the other integers", () => {
    const t = Tensor.fromArray([0, 4294967295, 2147483648, -1, 4294967296, 2.5], [6], "u32");
    expect([...t.toFloat64Array()]).toEqual([0, 4294967295, 2147483648, 0, 4294967295, 2]);
    // Stored little-endian as an unsigned word: 2^31 is 00 00 00 80.
    expect([...t.bytes.subarray(8, 12)]).toEqual([0, 0, 0, 0x80]);
  });
});
