import { Tensor } from "@kb/tensor";
import { describe, expect, test } from "vitest";
import { add, attention, exp, expWhereFlagged, matmul, rowSum, softmax } from "../lib/reference.js";
import { spanOf, splitEven } from "../lib/split.js";

const values = (t: Tensor) => Array.from(t.toFloat64Array());

describe("host references on hand-checked inputs", () => {
  test("matmul of 2 x 2 matrices", () => {
    const a = Tensor.fromArray([1, 2, 3, 4], [2, 2], "f16");
    const b = Tensor.fromArray([5, 6, 7, 8], [2, 2], "f16");
    const c = matmul(a, b, "f16");
    expect(c.shape).toEqual([2, 2]);
    expect(c.dtype).toBe("f16");
    expect(values(c)).toEqual([19, 22, 43, 50]);
  });

  test("matmul of [2, 3] x [3, 1]", () => {
    const a = Tensor.fromArray([1, 0, -1, 2, 2, 2], [2, 3], "f32");
    const b = Tensor.fromArray([3, 4, 5], [3, 1], "f32");
    expect(values(matmul(a, b, "f32"))).toEqual([-2, 24]);
  });

  test("matmul rounds once: 1 + 2^-11 + 2^-11 is 1 + 2^-10 in f16, not 1 (step-wise rounding)", () => {
    const a = Tensor.fromArray([1, 2 ** -11, 2 ** -11], [1, 3], "f16");
    const b = Tensor.fromArray([1, 1, 1], [3, 1], "f16");
    expect(values(matmul(a, b, "f16"))).toEqual([1 + 2 ** -10]);
  });

  test("add and exp, rounded to the output dtype", () => {
    const x = Tensor.fromArray([1, 2.5, -3], [3], "f16");
    const y = Tensor.fromArray([0.5, 0.25, 3], [3], "f16");
    expect(values(add(x, y, "f16"))).toEqual([1.5, 2.75, 0]);
    expect(values(exp(Tensor.fromArray([0, 1], [2], "f32"), "f32"))).toEqual([1, Math.fround(Math.E)]);
    // e rounded to f16 is 2.71875 (the nearest of 2.71875 and 2.72070...).
    expect(values(exp(Tensor.fromArray([1], [1], "f16"), "f16"))).toEqual([2.71875]);
  });

  test("rowSum gives [rows, 1]", () => {
    const s = rowSum(Tensor.fromArray([1, 2, 3, 4, 5, 6], [2, 3], "f32"), "f32");
    expect(s.shape).toEqual([2, 1]);
    expect(values(s)).toEqual([6, 15]);
  });

  test("softmax of [0, ln 3] is [0.25, 0.75]", () => {
    const s = softmax(Tensor.fromArray([0, Math.log(3)], [1, 2], "f32"), "f32");
    const [p0, p1] = values(s);
    expect(p0).toBeCloseTo(0.25, 7);
    expect(p1).toBeCloseTo(0.75, 7);
  });

  test("softmax subtracts the row max: [1000, 1000] is [0.5, 0.5], not NaN", () => {
    expect(values(softmax(Tensor.fromArray([1000, 1000, 0, 0], [2, 2], "f32"), "f32"))).toEqual([
      0.5, 0.5, 0.5, 0.5,
    ]);
  });

  test("attention: scores [0, ln 3] weigh V 1:3, equal scores average V", () => {
    // Q [2, 1], K [2, 1], V [2, 1], scale 1: row 0 scores q0 * k = [0, ln 3], row 1 scores [0, 0].
    const q = Tensor.fromArray([Math.log(3), 0], [2, 1], "f32");
    const k = Tensor.fromArray([0, 1], [2, 1], "f32");
    const v = Tensor.fromArray([4, 8], [2, 1], "f32");
    const o = attention(q, k, v, 1, "f32");
    expect(o.shape).toEqual([2, 1]);
    const [o0, o1] = values(o);
    expect(o0).toBeCloseTo(0.25 * 4 + 0.75 * 8, 5);
    expect(o1).toBe(6);
  });

  test("attention applies the scale before the softmax", () => {
    const q = Tensor.fromArray([2 * Math.log(3)], [1, 1], "f32");
    const k = Tensor.fromArray([0, 1], [2, 1], "f32");
    const v = Tensor.fromArray([4, 8], [2, 1], "f32");
    expect(values(attention(q, k, v, 0.5, "f32"))[0]).toBeCloseTo(7, 5);
  });

  test("expWhereFlagged: exp on flagged row tiles only", () => {
    const x = Tensor.fromArray([0, 0, 1, 1, 2], [5, 1], "f32");
    const flags = Tensor.fromArray([0, 1, 1], [3], "i32");
    expect(values(expWhereFlagged(x, flags, 2, "f32"))).toEqual([
      0,
      0,
      Math.fround(Math.E),
      Math.fround(Math.E),
      Math.fround(Math.exp(2)),
    ]);
  });
});

describe("host references keep shapes and check their inputs", () => {
  test("add and exp keep a 2-D input's shape and element order", () => {
    const x = Tensor.fromArray([0, 1, 2, 3, 4, 5], [2, 3], "f32");
    const y = Tensor.fromArray([10, 20, 30, 40, 50, 60], [2, 3], "f32");
    const sum = add(x, y, "f32");
    expect(sum.shape).toEqual([2, 3]);
    expect(values(sum)).toEqual([10, 21, 32, 43, 54, 65]);
    const e = exp(x, "f32");
    expect(e.shape).toEqual([2, 3]);
    expect(values(e)).toEqual([0, 1, 2, 3, 4, 5].map((v) => Math.fround(Math.exp(v))));
  });

  test("results are rounded to the requested dtype, whatever the inputs' dtype", () => {
    // x = f32(1/3); x + x in f64 is 0.66666668...; rounded once to bf16 (steps of 2^-8 there) it
    // is 171 * 2^-8 = 0.66796875, to i32 it is 1.
    const third = Tensor.fromArray([1 / 3], [1], "f32");
    const exact = Math.fround(1 / 3) * 2;
    expect(values(add(third, third, "f32"))).toEqual([Math.fround(exact)]);
    expect(values(add(third, third, "bf16"))).toEqual([0.66796875]);
    expect(values(add(third, third, "i32"))).toEqual([1]);
  });

  test("expWhereFlagged reads flags of any shape, one per tile", () => {
    const x = Tensor.fromArray([1, 1, 1, 1], [4, 1], "f32");
    const flags = Tensor.fromArray([1, 0], [2, 1], "i8");
    expect(values(expWhereFlagged(x, flags, 2, "f32"))).toEqual([
      Math.fround(Math.E),
      Math.fround(Math.E),
      1,
      1,
    ]);
    expect(() => expWhereFlagged(x, Tensor.fromArray([1], [1], "i8"), 2, "f32")).toThrow(
      /1 flags for 2 tiles of 2 rows/,
    );
  });

  test("mismatched operands are rejected", () => {
    const a = Tensor.zeros([2, 3], "f32");
    expect(() => matmul(a, a, "f32")).toThrow(/inner dimensions differ \(3 and 2\)/);
    expect(() => add(a, Tensor.zeros([3, 2], "f32"), "f32")).toThrow(/shapes differ/);
    expect(() => rowSum(Tensor.zeros([6], "f32"), "f32")).toThrow(/expected a 2-D tensor/);
    expect(() => attention(a, Tensor.zeros([4, 2], "f32"), Tensor.zeros([4, 3], "f32"), 1, "f32")).toThrow(
      /do not fit/,
    );
  });
});

describe("splitting work", () => {
  test("splitEven gives the first parts the extra items", () => {
    expect(splitEven(10, 4)).toEqual([
      { start: 0, count: 3 },
      { start: 3, count: 3 },
      { start: 6, count: 2 },
      { start: 8, count: 2 },
    ]);
  });

  test("splitEven leaves parts empty when there are fewer items than parts", () => {
    expect(splitEven(3, 5).map((span) => span.count)).toEqual([1, 1, 1, 0, 0]);
    expect(splitEven(3, 5)[4]).toEqual({ start: 3, count: 0 });
  });

  test("splitEven keeps whole granules; the last may be short", () => {
    expect(splitEven(100, 3, 32)).toEqual([
      { start: 0, count: 64 },
      { start: 64, count: 32 },
      { start: 96, count: 4 },
    ]);
  });

  test("spanOf is part i of splitEven", () => {
    for (const [total, parts, granule] of [
      [10, 4, 1],
      [3, 5, 1],
      [100, 3, 32],
      [1000, 16, 7],
    ] as const) {
      const spans = splitEven(total, parts, granule);
      for (let i = 0; i < parts; i++) expect(spanOf(total, parts, i, granule)).toEqual(spans[i]);
    }
  });
});
