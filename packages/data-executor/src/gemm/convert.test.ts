import { f32ToBf16Bits, f32ToF16Bits, roundToDtype } from "@kb/tensor";
import { describe, expect, it } from "vitest";
import { fromFloat32, toFloat32 } from "./index.js";
import { firstBitDifference, randomFloat32 } from "./test-support.js";

/** f32 bit patterns that probe every rounding branch, then random ones. */
function probeBits(): Uint32Array {
  const bits: number[] = [];
  const edges = [
    0, 0x00000001, 0x007fffff, 0x00800000, 0x33000000, 0x33000001, 0x337fffff, 0x33800000, 0x33c00000,
    0x387fc000, 0x387fe000, 0x387ff000, 0x387fffff, 0x38800000, 0x38801000, 0x38802000, 0x38803000,
    0x3f800000, 0x3f801000, 0x3f803000, 0x3f808000, 0x3f818000, 0x3f7fffff, 0x477fe000, 0x477fefff,
    0x477ff000, 0x477ff001, 0x47800000, 0x7f7f7fff, 0x7f7f8000, 0x7f7fffff, 0x7f800000, 0x7f800001,
    0x7fc00000, 0x7fffffff,
  ];
  for (const edge of edges) {
    for (const delta of [-1, 0, 1]) {
      const value = (edge + delta) >>> 0;
      if (value <= 0x7fffffff) bits.push(value, (value | 0x80000000) >>> 0);
    }
  }
  // Every exponent with a spread of fractions, then uniformly random patterns.
  for (let exponent = 0; exponent < 256; exponent++) {
    for (const fraction of [0, 1, 0xfff, 0x1000, 0x1001, 0x2000, 0x3000, 0x7fff, 0x8000, 0x18000, 0x7fffff]) {
      bits.push(((exponent << 23) | fraction) >>> 0);
    }
  }
  let state = 12345;
  for (let i = 0; i < 200_000; i++) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    bits.push(state);
  }
  return new Uint32Array(bits);
}

describe("fromFloat32 and toFloat32", () => {
  const bits = probeBits();
  const values = new Float32Array(bits.buffer);

  it("encodes f16 and bf16 bit for bit like @kb/tensor's f32ToF16Bits / f32ToBf16Bits", () => {
    const f16 = new Uint16Array(fromFloat32(values, "f16").buffer);
    const bf16 = new Uint16Array(fromFloat32(values, "bf16").buffer);
    for (let i = 0; i < values.length; i++) {
      const value = values[i]!;
      if (f16[i] !== f32ToF16Bits(value) || bf16[i] !== f32ToBf16Bits(value)) {
        expect.fail(
          `0x${bits[i]!.toString(16)} (${value}): f16 0x${f16[i]!.toString(16)} vs 0x${f32ToF16Bits(value).toString(16)}, bf16 0x${bf16[i]!.toString(16)} vs 0x${f32ToBf16Bits(value).toString(16)}`,
        );
      }
    }
  });

  it("round-trips every f16 and bf16 bit pattern exactly (NaNs stay NaN)", () => {
    const all = new Uint16Array(65536).map((_, index) => index);
    const bytes = new Uint8Array(all.buffer);
    for (const dtype of ["f16", "bf16"] as const) {
      const decoded = toFloat32(bytes, dtype);
      const encoded = new Uint16Array(fromFloat32(decoded, dtype).buffer);
      for (let pattern = 0; pattern < 65536; pattern++) {
        const notANumber = Number.isNaN(decoded[pattern]);
        const expected = notANumber ? (dtype === "f16" ? 0x7e00 : 0x7fc0) : pattern;
        if (encoded[pattern] !== expected)
          expect.fail(`${dtype} 0x${pattern.toString(16)} came back as 0x${encoded[pattern]!.toString(16)}`);
      }
    }
  });

  it("decodes bf16 as the high half of an f32 and keeps f32 exactly", () => {
    const decoded = toFloat32(fromFloat32(values, "f32"), "f32");
    expect(firstBitDifference(decoded, values)).toBe(-1);
    const bf16 = toFloat32(new Uint8Array(new Uint16Array([0x3f80, 0xc040, 0x7f80, 0x0001]).buffer), "bf16");
    expect(Array.from(bf16)).toEqual([1, -3, Number.POSITIVE_INFINITY, 2 ** -133]);
  });

  it("rounds i8 and i32 half to even with saturation, like roundToDtype, and decodes them", () => {
    const samples = new Float32Array([
      0.5,
      1.5,
      2.5,
      -2.5,
      127.5,
      128,
      -129,
      3e9,
      -3e9,
      Number.NaN,
      -0.4,
      100.7,
    ]);
    for (const dtype of ["i8", "i32"] as const) {
      const encoded = fromFloat32(samples, dtype);
      const decoded = toFloat32(encoded, dtype);
      expect(Array.from(decoded)).toEqual(
        Array.from(samples, (value) => Math.fround(roundToDtype(value, dtype))),
      );
    }
    expect(Array.from(toFloat32(new Uint8Array([0x80, 0x7f, 0xff]), "i8"))).toEqual([-128, 127, -1]);
  });

  it("reads misaligned views and fills a longer `out` from the start", () => {
    const source = randomFloat32(33, 4);
    const bytes = new Uint8Array(2 + 66);
    bytes.set(fromFloat32(source, "f16"), 1); // odd byte offset: not a valid Uint16Array view
    const out = new Float32Array(40).fill(7);
    const decoded = toFloat32(bytes.subarray(1, 67), "f16", out);
    expect(decoded.length).toBe(33);
    expect(decoded.buffer).toBe(out.buffer);
    expect(out[33]).toBe(7);
    decoded.forEach((value, index) => {
      expect(Math.abs(value - source[index]!)).toBeLessThanOrEqual(2 ** -11);
    });
    const target = new Uint8Array(1 + 132);
    fromFloat32(source, "f32", target.subarray(1));
    expect(toFloat32(target.subarray(1), "f32")).toEqual(source);
  });

  it("rejects unknown dtypes, partial elements and short outputs with TENSOR_INVALID", () => {
    expect(() => toFloat32(new Uint8Array(4), "f64" as never)).toThrow(
      /\[TENSOR_INVALID\] toFloat32: expected a dtype/,
    );
    expect(() => toFloat32(new Uint8Array(3), "f16")).toThrow(
      /3 bytes are not a whole number of f16 elements/,
    );
    expect(() => toFloat32(new Uint8Array(8), "f32", new Float32Array(1))).toThrow(
      /room for 1 values, expected at least 2/,
    );
    expect(() => fromFloat32(new Float32Array(2), "bf16", new Uint8Array(3))).toThrow(
      /room for 3 bytes, expected at least 4/,
    );
  });
});
