import { describe, expect, it } from "vitest";
import { elementView, roundToDtype, Tensor } from "./index.js";

// The integer widths u8, u16, i16, i64, u64: stored little-endian two's complement, written by
// rounding half to even and saturating as the other integers, the 64-bit ones exactly.
describe("integer widths", () => {
  it("stores u8, u16 and i16 saturated, in 1 and 2 bytes", () => {
    const u8 = Tensor.fromArray([300, -5, 2.5], [3], "u8");
    expect([...u8.bytes]).toEqual([255, 0, 2]);
    const i16 = Tensor.fromArray([40000, -40000, -2], [3], "i16");
    expect([...i16.toFloat64Array()]).toEqual([32767, -32768, -2]);
    // -2 as i16 is 0xfffe, little-endian.
    expect([...i16.bytes.subarray(4)]).toEqual([0xfe, 0xff]);
    expect(Tensor.full([2], 65535.4, "u16").get(1)).toBe(65535);
    expect(roundToDtype(70000, "u16")).toBe(65535);
  });

  it("stores i64 and u64 exactly in 8 bytes and saturates at their ends", () => {
    const i64 = Tensor.fromArray([-1, 2 ** 53, 1e30, -1e30], [4], "i64");
    expect([...(elementView(i64) as BigInt64Array)]).toEqual([-1n, 2n ** 53n, 2n ** 63n - 1n, -(2n ** 63n)]);
    // -1 is eight 0xff bytes.
    expect([...i64.bytes.subarray(0, 8)]).toEqual([255, 255, 255, 255, 255, 255, 255, 255]);
    // 2^63 - 1 reads back as its nearest double, 2^63.
    expect(i64.getFlat(2)).toBe(2 ** 63);
    const u64 = Tensor.fromArray([-3, 2 ** 64, 7], [3], "u64");
    expect([...(elementView(u64) as BigUint64Array)]).toEqual([0n, 2n ** 64n - 1n, 7n]);
    expect([...u64.toFloat32Array()]).toEqual([0, 2 ** 64, 7]);
  });

  it("draws 64-bit random integers within the bounds", () => {
    const t = Tensor.random([64], "i64", { seed: 3, low: -4, high: 4 });
    const values = [...t.toFloat64Array()];
    expect(values.every((v) => Number.isInteger(v) && v >= -4 && v <= 4)).toBe(true);
    expect(new Set(values).size).toBeGreaterThan(4);
    expect(() => Tensor.random([1], "u64", { low: 0, high: 2 ** 40 })).toThrow(/at most 2\^32 apart/);
  });
});
