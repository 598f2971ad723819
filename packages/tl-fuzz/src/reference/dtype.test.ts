import { describe, expect, it } from "vitest";
import { decodeBf16, decodeF16, encodeBf16, encodeF16, roundTo, wrap32 } from "./dtype.js";

describe("f16 rounding", () => {
  it("rounds ties to even: 2049 -> 2048, 2051 -> 2052 (spacing 2 in [2048, 4096))", () => {
    expect(roundTo("f16", 2049)).toBe(2048);
    expect(roundTo("f16", 2051)).toBe(2052);
    expect(roundTo("f16", 2050)).toBe(2050);
    expect(roundTo("f16", -2049)).toBe(-2048);
    // Just above the tie rounds up: one rounding straight from the double.
    expect(roundTo("f16", 2049.0001)).toBe(2050);
    expect(roundTo("f16", 1 + 2 ** -11)).toBe(1);
    expect(roundTo("f16", 1 + 3 * 2 ** -11)).toBe(1 + 2 ** -9);
  });

  it("encodes known bit patterns", () => {
    expect(encodeF16(1)).toBe(0x3c00);
    expect(encodeF16(-2)).toBe(0xc000);
    expect(encodeF16(65504)).toBe(0x7bff);
    expect(encodeF16(-0)).toBe(0x8000);
    expect(encodeF16(0.1)).toBe(0x2e66);
    expect(decodeF16(0x2e66)).toBe(0.0999755859375);
  });

  it("overflows to Inf from 65520 (half an ulp past 65504)", () => {
    expect(roundTo("f16", 65519)).toBe(65504);
    expect(encodeF16(65520)).toBe(0x7c00);
    expect(roundTo("f16", 65520)).toBe(Number.POSITIVE_INFINITY);
    expect(roundTo("f16", -1e6)).toBe(Number.NEGATIVE_INFINITY);
    expect(roundTo("f16", Number.POSITIVE_INFINITY)).toBe(Number.POSITIVE_INFINITY);
  });

  it("rounds subnormals at their fixed precision (multiples of 2^-24)", () => {
    expect(encodeF16(2 ** -24)).toBe(0x0001);
    expect(decodeF16(0x0001)).toBe(2 ** -24); // 5.96e-8
    expect(encodeF16(2 ** -25)).toBe(0x0000); // tie between 0 and 2^-24: 0 is even
    expect(encodeF16(2 ** -25 * 1.0000001)).toBe(0x0001);
    expect(encodeF16(3 * 2 ** -25)).toBe(0x0002); // tie between 1 and 2 quanta: 2
    expect(encodeF16(-(2 ** -26))).toBe(0x8000); // -0
    expect(Object.is(roundTo("f16", -(2 ** -26)), -0)).toBe(true);
    expect(encodeF16(2 ** -14)).toBe(0x0400); // smallest normal
    expect(encodeF16(2 ** -14 - 2 ** -25)).toBe(0x0400); // tie rounds up into the normal range
    expect(decodeF16(0x03ff)).toBe(1023 * 2 ** -24);
  });

  it("maps every NaN to 0x7e00 and decodes NaN patterns as NaN", () => {
    expect(encodeF16(Number.NaN)).toBe(0x7e00);
    expect(decodeF16(0x7e00)).toBeNaN();
    expect(decodeF16(0xfc01)).toBeNaN();
    expect(decodeF16(0xfc00)).toBe(Number.NEGATIVE_INFINITY);
  });

  it("round-trips every non-NaN pattern and rounds every midpoint to the even neighbour", () => {
    for (let bits = 0; bits < 0x10000; bits++) {
      const value = decodeF16(bits);
      if (!Number.isNaN(value) && encodeF16(value) !== bits)
        expect([bits, encodeF16(value)]).toEqual([bits, bits]);
    }
    for (let bits = 0; bits < 0x7bff; bits++) {
      const low = decodeF16(bits);
      const mid = (low + decodeF16(bits + 1)) / 2;
      const even = bits % 2 === 0 ? bits : bits + 1;
      if (encodeF16(mid) !== even) expect([bits, encodeF16(mid)]).toEqual([bits, even]);
    }
  });
});

describe("bf16 rounding", () => {
  it("rounds ties to even", () => {
    expect(encodeBf16(1)).toBe(0x3f80);
    expect(roundTo("bf16", 1 + 2 ** -8)).toBe(1);
    expect(roundTo("bf16", 1 + 3 * 2 ** -8)).toBe(1.015625);
    expect(roundTo("bf16", 257)).toBe(256);
    expect(roundTo("bf16", 259)).toBe(260);
    expect(roundTo("bf16", 258.5)).toBe(258);
  });

  it("overflows from (2 - 2^-8)·2^127, rounds subnormals, maps NaN to 0x7fc0", () => {
    expect(encodeBf16((2 - 2 ** -7) * 2 ** 127)).toBe(0x7f7f);
    expect(encodeBf16((2 - 2 ** -8) * 2 ** 127)).toBe(0x7f80);
    expect(roundTo("bf16", 3.4028234663852886e38)).toBe(Number.POSITIVE_INFINITY);
    expect(encodeBf16(2 ** -133)).toBe(0x0001);
    expect(encodeBf16(2 ** -134)).toBe(0x0000);
    expect(decodeBf16(0x0001)).toBe(2 ** -133);
    expect(encodeBf16(Number.NaN)).toBe(0x7fc0);
    expect(encodeBf16(-0)).toBe(0x8000);
  });

  it("agrees with rounding the binary32 bits of f32 values (ties to even on the low 16 bits)", () => {
    const f32 = new Float32Array(1);
    const bits = new Uint32Array(f32.buffer);
    let state = 12345;
    for (let i = 0; i < 20000; i++) {
      state = (Math.imul(state, 1103515245) + 12345) >>> 0;
      bits[0] = state;
      const x = f32[0] as number;
      if (Number.isNaN(x)) continue;
      const b = bits[0] as number;
      const expected = ((b + 0x7fff + ((b >>> 16) & 1)) >>> 16) & 0xffff;
      if (encodeBf16(x) !== expected)
        expect([b.toString(16), encodeBf16(x)]).toEqual([b.toString(16), expected]);
    }
  });
});

describe("integer conversion", () => {
  it("rounds half to even and saturates; NaN gives 0; never -0", () => {
    const cases: [number, number][] = [
      [2.5, 2],
      [3.5, 4],
      [-2.5, -2],
      [-3.5, -4],
      [0.5, 0],
      [1.5, 2],
      [2.4, 2],
      [2.6, 3],
      [127.4, 127],
      [127.5, 127],
      [300, 127],
      [-128.5, -128],
      [-300, -128],
      [Number.POSITIVE_INFINITY, 127],
      [Number.NEGATIVE_INFINITY, -128],
      [Number.NaN, 0],
    ];
    for (const [x, expected] of cases) expect([x, roundTo("i8", x)]).toEqual([x, expected]);
    expect(Object.is(roundTo("i8", -0.4), 0)).toBe(true);
    expect(Object.is(roundTo("i8", -0), 0)).toBe(true);
  });

  it("saturates i32 at [-2^31, 2^31 - 1]", () => {
    expect(roundTo("i32", 2147483647.5)).toBe(2147483647);
    expect(roundTo("i32", 1e10)).toBe(2147483647);
    expect(roundTo("i32", -2147483648.5)).toBe(-2147483648);
    expect(roundTo("i32", 4.5)).toBe(4);
    expect(roundTo("i32", -1e300)).toBe(-2147483648);
  });

  it("wrap32 is modulo 2^32 in two's complement", () => {
    expect(wrap32(2 ** 31)).toBe(-(2 ** 31));
    expect(wrap32(2 ** 32 + 5)).toBe(5);
    expect(wrap32(-(2 ** 31) - 1)).toBe(2 ** 31 - 1);
  });
});

describe("f32 rounding", () => {
  it("is Math.fround", () => {
    expect(roundTo("f32", 1 + 2 ** -24)).toBe(1);
    expect(roundTo("f32", 1 + 3 * 2 ** -24)).toBe(1 + 2 ** -22);
    expect(roundTo("f32", 2 ** 128)).toBe(Number.POSITIVE_INFINITY);
  });
});
