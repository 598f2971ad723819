import { describe, expect, it } from "vitest";
import { broadcastShapes, evaluateMath } from "./index.js";

const operand = (values: readonly number[], shape: readonly number[]) => ({
  values: Float64Array.from(values),
  shape,
});

describe("broadcastShapes (numpy's rules)", () => {
  it("aligns shapes at their last dimension and stretches 1s", () => {
    expect(broadcastShapes([[4, 1], [3]])).toEqual([4, 3]);
    expect(broadcastShapes([[2, 1, 5], [3, 1], [1]])).toEqual([2, 3, 5]);
    expect(broadcastShapes([[8], [8]])).toEqual([8]);
    expect(broadcastShapes([[1], [2, 1, 1]])).toEqual([2, 1, 1]);
  });

  it("answers null when two sizes differ and neither is 1", () => {
    expect(broadcastShapes([[4], [3]])).toBeNull();
    expect(
      broadcastShapes([
        [2, 3],
        [3, 3],
      ]),
    ).toBeNull();
  });
});

describe("evaluateMath", () => {
  it("broadcasts every operand of a ternary op", () => {
    // where(cond [2, 1], a [3], b [1]): cond picks a whole row of a or of b.
    const out = evaluateMath(
      "where",
      [operand([1, 0], [2, 1]), operand([1, 2, 3], [3]), operand([-1], [1])],
      [2, 3],
      null,
      { scalars: [] },
    );
    expect([...out]).toEqual([1, 2, 3, -1, -1, -1]);
  });

  it("swaps two axes of a rank-3 tensor", () => {
    // x[i, j, k] = 100 i + 10 j + k of shape [2, 2, 3]; axes 0 and 1 swapped: out[j, i, k] = x[i, j, k].
    const x = [0, 1, 2, 10, 11, 12, 100, 101, 102, 110, 111, 112];
    const out = evaluateMath("transpose", [operand(x, [2, 2, 3])], [2, 2, 3], 0, { scalars: [1] });
    expect([...out]).toEqual([0, 1, 2, 100, 101, 102, 10, 11, 12, 110, 111, 112]);
  });

  it("puts the scalar where scalar_index says", () => {
    const x = operand([2, 3], [2]);
    expect([...evaluateMath("pow", [x], [2], null, { scalars: [2], scalarIndex: 0 })]).toEqual([4, 8]);
    expect([...evaluateMath("pow", [x], [2], null, { scalars: [2] })]).toEqual([4, 9]);
  });

  it("cumprod on integers wraps each product exactly (i32, u32, i64)", () => {
    const scan = (values: number[], dtype: "i32" | "u32" | "i64") => [
      ...evaluateMath("cumprod", [operand(values, [values.length])], [values.length], 0, {
        scalars: [],
        dtype,
      }),
    ];
    // Exact products modulo 2^32 (by hand, Python integers): 100000 x 100001 = 10000100000 ->
    // 1410165408, x 100002 -> -1595066048, x 100003 -> -599592000 (the f64 product 1.00006e20
    // is not exact, and would wrap to another value).
    expect(scan([100000, 100001, 100002, 100003], "i32")).toEqual([
      100000, 1410165408, -1595066048, -599592000,
    ]);
    // u32: 4e9 x 3 = 12e9 - 2 x 2^32 = 3410065408.
    expect(scan([4000000000, 3], "u32")).toEqual([4000000000, 3410065408]);
    // i64: 3, -15, -105, -105 x (2^40 + 1) = -115448720916585.
    expect(scan([3, -5, 7, 2 ** 40 + 1], "i64")).toEqual([3, -15, -105, -115448720916585]);
  });
});
