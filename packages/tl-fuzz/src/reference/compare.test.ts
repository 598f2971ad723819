import { describe, expect, it } from "vitest";
import { sameWithin } from "./compare.js";
import { tensor } from "./tensor.js";

describe("sameWithin", () => {
  it("accepts values within the dtype's tolerance and reports the first that is not", () => {
    const expected = tensor([1, 2, 3], [3], "f16");
    expect(sameWithin(tensor([1, 2, 3], [3], "f16"), expected)).toEqual({ ok: true, mismatches: 0 });
    // f16: |a - b| <= 1e-3 + 1e-3 |b|.
    expect(sameWithin(tensor([1.0009765625, 2, 3], [3], "f16"), expected).ok).toBe(true);
    const off = sameWithin(tensor([1, 2.00390625, 3.0078125], [3], "f16"), expected);
    expect(off.ok).toBe(false);
    expect(off.mismatches).toBe(2);
    expect(off.first).toEqual({ flat: 1, index: [1], actual: 2.00390625, expected: 2 });
  });

  it("treats NaN as equal to NaN and equal infinities as equal", () => {
    const special = tensor([Number.NaN, Number.POSITIVE_INFINITY, -0], [3], "f32");
    expect(sameWithin(special, tensor([Number.NaN, Number.POSITIVE_INFINITY, 0], [3], "f32")).ok).toBe(true);
    expect(
      sameWithin(
        tensor([Number.NEGATIVE_INFINITY], [1], "f32"),
        tensor([Number.POSITIVE_INFINITY], [1], "f32"),
      ).ok,
    ).toBe(false);
    expect(sameWithin(tensor([1e30], [1], "f32"), tensor([Number.POSITIVE_INFINITY], [1], "f32")).ok).toBe(
      false,
    );
    expect(sameWithin(tensor([Number.NaN], [1], "f32"), tensor([1], [1], "f32")).ok).toBe(false);
    expect(sameWithin(tensor([1], [1], "f32"), tensor([Number.NaN], [1], "f32")).ok).toBe(false);
  });

  it("is exact for integers and uses the given dtype's tolerance", () => {
    expect(sameWithin(tensor([1, 2], [2], "i32"), tensor([1, 3], [2], "i32")).first?.index).toEqual([1]);
    const a = tensor([1.005], [1], "f32");
    const b = tensor([1], [1], "f32");
    expect(sameWithin(a, b).ok).toBe(false);
    expect(sameWithin(a, b, "bf16").ok).toBe(true);
    expect(sameWithin(a, b, "f32", { rtol: 0, atol: 0.01 }).ok).toBe(true);
  });

  it("does not compare tensors of different shapes or dtypes", () => {
    const result = sameWithin(tensor([1, 2], [2], "f32"), tensor([1, 2], [1, 2], "f32"));
    expect(result.ok).toBe(false);
    expect(result.problem).toMatch(/\[2\].*\[1, 2\]/);
    expect(sameWithin(tensor([1], [1], "f16"), tensor([1], [1], "f32")).ok).toBe(false);
  });
});
