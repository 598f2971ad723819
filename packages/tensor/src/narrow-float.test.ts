import { describe, expect, it } from "vitest";
import { decodeNarrowFloat, encodeNarrowFloat, narrowFloatMax, roundToDtype, Tensor } from "./index.js";

describe("f8e4m3 (OCP E4M3FN)", () => {
  it("encodes normal numbers, subnormals and ties to even from the double directly", () => {
    expect(encodeNarrowFloat(1, "f8e4m3")).toBe(0x38); // exponent field 7 = bias
    expect(encodeNarrowFloat(-1.25, "f8e4m3")).toBe(0xba);
    expect(encodeNarrowFloat(2 ** -9, "f8e4m3")).toBe(0x01); // smallest subnormal
    expect(encodeNarrowFloat(2 ** -10, "f8e4m3")).toBe(0x00); // half of it: ties to even (0)
    expect(encodeNarrowFloat(3 * 2 ** -10, "f8e4m3")).toBe(0x02); // 1.5 quanta: ties to even (2)
    expect(encodeNarrowFloat(1 + 1 / 16, "f8e4m3")).toBe(0x38); // between 1 and 1.125: to even
    expect(encodeNarrowFloat(1 + 3 / 16, "f8e4m3")).toBe(0x3a); // between 1.125 and 1.25: to even
    expect(encodeNarrowFloat(1 + 1 / 16 + 2 ** -40, "f8e4m3")).toBe(0x39); // just above the tie
    expect(encodeNarrowFloat(-0, "f8e4m3")).toBe(0x80);
  });

  it("saturates at ±448 (no infinities) and stores NaN as 0x7f", () => {
    expect(narrowFloatMax("f8e4m3")).toBe(448);
    expect(encodeNarrowFloat(448, "f8e4m3")).toBe(0x7e);
    expect(encodeNarrowFloat(464, "f8e4m3")).toBe(0x7e); // the tie with 480 (which would be NaN)
    expect(encodeNarrowFloat(1e6, "f8e4m3")).toBe(0x7e);
    expect(encodeNarrowFloat(Number.POSITIVE_INFINITY, "f8e4m3")).toBe(0x7e);
    expect(encodeNarrowFloat(Number.NEGATIVE_INFINITY, "f8e4m3")).toBe(0xfe);
    expect(encodeNarrowFloat(Number.NaN, "f8e4m3")).toBe(0x7f);
    expect(decodeNarrowFloat(0x7f, "f8e4m3")).toBeNaN();
    expect(decodeNarrowFloat(0x77, "f8e4m3")).toBe(240); // exponent 14 - 7 = 7: 1.875 * 128
  });
});

describe("f8e5m2", () => {
  it("rounds to nearest even, saturates finite overflow at ±57344 and keeps infinities", () => {
    expect(encodeNarrowFloat(1, "f8e5m2")).toBe(0x3c);
    expect(encodeNarrowFloat(1.125, "f8e5m2")).toBe(0x3c); // between 1 and 1.25: to even
    expect(encodeNarrowFloat(1.375, "f8e5m2")).toBe(0x3e); // between 1.25 and 1.5: to even
    expect(encodeNarrowFloat(2 ** -16, "f8e5m2")).toBe(0x01); // smallest subnormal
    expect(narrowFloatMax("f8e5m2")).toBe(57344);
    expect(encodeNarrowFloat(60000, "f8e5m2")).toBe(0x7b);
    expect(encodeNarrowFloat(Number.NEGATIVE_INFINITY, "f8e5m2")).toBe(0xfc);
    expect(decodeNarrowFloat(0x7c, "f8e5m2")).toBe(Number.POSITIVE_INFINITY);
    expect(decodeNarrowFloat(0x7d, "f8e5m2")).toBeNaN();
    expect(encodeNarrowFloat(Number.NaN, "f8e5m2")).toBe(0x7e);
  });
});

describe("f4e2m1 (the mxfp4 element)", () => {
  it("holds ±{0, 0.5, 1, 1.5, 2, 3, 4, 6}, ties to even, saturates at ±6, NaN stores 0", () => {
    const values = Array.from({ length: 16 }, (_, bits) => decodeNarrowFloat(bits, "f4e2m1"));
    expect(values).toEqual([0, 0.5, 1, 1.5, 2, 3, 4, 6, -0, -0.5, -1, -1.5, -2, -3, -4, -6]);
    expect(encodeNarrowFloat(5, "f4e2m1")).toBe(0x6); // between 4 and 6: to even (4)
    expect(encodeNarrowFloat(2.5, "f4e2m1")).toBe(0x4); // between 2 and 3: to even (2)
    expect(encodeNarrowFloat(0.25, "f4e2m1")).toBe(0x0);
    expect(encodeNarrowFloat(0.75, "f4e2m1")).toBe(0x2);
    expect(encodeNarrowFloat(-3, "f4e2m1")).toBe(0xd);
    expect(encodeNarrowFloat(7, "f4e2m1")).toBe(0x7);
    expect(encodeNarrowFloat(Number.NaN, "f4e2m1")).toBe(0x0);
    expect(decodeNarrowFloat(0xf5, "f4e2m1")).toBe(3); // only the low nibble counts
  });
});

describe("host tensors of fp8 and fp4", () => {
  it("store one element per byte, round on the way in, and decode exactly", () => {
    const t = Tensor.fromArray([1, -1.25, 500, 0.3], [4], "f8e4m3");
    expect(Array.from(t.bytes)).toEqual([0x38, 0xba, 0x7e, 0x2a]); // 0.3 -> 1.25 * 2^-2 = 0.3125
    expect(Array.from(t.toFloat64Array())).toEqual([1, -1.25, 448, 0.3125]);
    expect(t.getFlat(3)).toBe(0.3125);
    const fp4 = Tensor.fromArray([5, -0.75], [2], "f4e2m1");
    expect(fp4.nbytes).toBe(2);
    expect(Array.from(fp4.toFloat32Array())).toEqual([4, -1]);
    expect(roundToDtype(70000, "f8e5m2")).toBe(57344);
    const random = Tensor.random([64], "f8e5m2", { seed: 3 });
    for (const v of random.toFloat64Array()) expect(roundToDtype(v, "f8e5m2")).toBe(v);
  });
});
