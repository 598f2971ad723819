import { describe, expect, it } from "vitest";
import { compositeMath } from "./composite-math.js";
import { binary, cast, clamp, fma, unary, where } from "./elementwise.js";
import { block, transpose, view } from "./layout.js";
import { reduce, softmax } from "./reduce.js";
import { arange, full, tensor } from "./tensor.js";

const values = (t: { data: Float64Array }) => [...t.data];

describe("tensors and constants", () => {
  it("rounds values to the dtype", () => {
    const t = tensor([2049, 0.1, 300], [3], "f16");
    expect(values(t)).toEqual([2048, 0.0999755859375, 300]);
    expect(values(tensor([2.5, 300, -0.6], [3], "i8"))).toEqual([2, 127, -1]);
    expect(() => tensor([1, 2], [3], "f32")).toThrow(/holds 3 elements/);
    expect(() => tensor([], [], "f32")).toThrow(/non-empty/);
  });

  it("full rounds its value once; arange rounds each element", () => {
    expect(values(full([2], 0.1, "bf16"))).toEqual([0.10009765625, 0.10009765625]);
    const bytes = arange(0, 300, "i8");
    expect(bytes.shape).toEqual([300]);
    expect(bytes.data[299]).toBe(127);
    expect(values(arange(2049, 2052, "f16"))).toEqual([2048, 2050, 2052]);
  });
});

describe("elementwise ops", () => {
  it("unary ops compute in f64 and round once", () => {
    expect(values(unary("exp", tensor([0, 1], [2], "f16")))).toEqual([1, 2.71875]);
    expect(values(unary("sigmoid", tensor([0], [1], "f32")))).toEqual([0.5]);
    const relu = unary("relu", tensor([-1, -0, Number.NaN, 2], [4], "f32"));
    expect(relu.data[0]).toBe(0);
    expect(Object.is(relu.data[1], 0)).toBe(true); // relu(-0) = +0
    expect(relu.data[2]).toBeNaN();
    expect(relu.data[3]).toBe(2);
    expect(values(unary("log", tensor([0, -1], [2], "f32")))).toEqual([Number.NEGATIVE_INFINITY, Number.NaN]);
  });

  it("binary ops: one rounding, scalars at f64 precision", () => {
    const x = tensor([2048], [1], "f16");
    expect(values(binary("add", x, tensor([1], [1], "f16")))).toEqual([2048]); // 2049 ties to 2048
    // 2048 + 1.0001 = 2049.0001 rounds up; rounding the scalar to f16 first would give 2048.
    expect(values(binary("add", x, 1.0001))).toEqual([2050]);
    expect(values(binary("sub", tensor([1], [1], "f32"), 3))).toEqual([-2]); // the tensor first
    expect(() => binary("add", x, Number.POSITIVE_INFINITY)).toThrow(/finite/);
    expect(() => binary("add", x, tensor([1, 2], [2], "f16"))).toThrow(/shapes differ/);
    expect(() => binary("add", x, tensor([1], [1], "f32"))).toThrow(/dtypes differ/);
  });

  it("maximum / minimum propagate NaN from either side and keep the first operand on a tie", () => {
    const a = tensor([Number.NaN, 1, -0, 3], [4], "f32");
    const b = tensor([1, Number.NaN, 0, 2], [4], "f32");
    const max = binary("maximum", a, b);
    expect(max.data[0]).toBeNaN();
    expect(max.data[1]).toBeNaN();
    expect(Object.is(max.data[2], -0)).toBe(true);
    expect(max.data[3]).toBe(3);
    const min = binary("minimum", a, b);
    expect(Object.is(min.data[2], -0)).toBe(true);
    expect(min.data[3]).toBe(2);
  });

  it("integer arithmetic wraps and divides by truncation; a fractional scalar rounds and saturates", () => {
    // 100 + 100 = 200 = 256 - 56 in i8.
    expect(values(binary("add", tensor([100, -100], [2], "i8"), 100))).toEqual([-56, 0]);
    const quotient = binary("div", tensor([1, 0, 7, -7], [4], "i32"), tensor([0, 0, 2, 2], [4], "i32"));
    expect(values(quotient)).toEqual([-1, -1, 3, -3]); // x / 0 = -1; 3.5 -> 3, -3.5 -> -3
    expect(values(binary("mul", tensor([65536], [1], "i32"), 65537))).toEqual([65536]); // 2^32 + 2^16
    expect(values(binary("mul", tensor([3, 300], [2], "i32"), 0.5))).toEqual([2, 150]); // 1.5 -> 2
    expect(values(unary("abs", tensor([-128, -5], [2], "i8")))).toEqual([-128, 5]);
  });

  it("mod has the dividend's sign (fmod on floats, remainder on integers, a % 0 = a); floor and ceil", () => {
    expect(values(binary("mod", tensor([7, -7, 5.5], [3], "f32"), 3))).toEqual([1, -1, 2.5]);
    expect(values(binary("mod", tensor([-7, 7, 5], [3], "i32"), tensor([3, -3, 0], [3], "i32")))).toEqual([
      -1, 1, 5,
    ]);
    expect(values(unary("floor", tensor([1.5, -1.5], [2], "f32")))).toEqual([1, -2]);
    expect(values(unary("ceil", tensor([1.5, -1.5], [2], "f32")))).toEqual([2, -1]);
  });

  it("fma, where, clamp, cast", () => {
    const f16 = (v: number[]) => tensor(v, [v.length], "f16");
    expect(values(fma(f16([2048]), f16([1]), f16([1])))).toEqual([2048]);
    const cond = tensor([1, 0, Number.NaN, -0], [4], "f32");
    const picked = where(cond, tensor([1, 2, 3, 4], [4], "f32"), tensor([10, 20, 30, 40], [4], "f32"));
    expect(values(picked)).toEqual([1, 20, 3, 40]);
    expect(() => where(tensor([1], [1], "i8"), tensor([1], [1], "f32"), tensor([1], [1], "f32"))).toThrow(
      /dtypes differ/,
    );
    const clamped = clamp(tensor([-5, 0.5, 5, Number.NaN], [4], "f32"), 0, 1);
    expect(values(clamped)).toEqual([0, 0.5, 1, Number.NaN]);
    expect(() => clamp(clamped, 1, 0)).toThrow(/lo <= hi/);
    expect(values(cast(tensor([2.5, -2.5, 300, Number.NaN], [4], "f32"), "i8"))).toEqual([2, -2, 127, 0]);
    const wide = cast(tensor([65520, 2049, -70000], [3], "i32"), "f16");
    expect(wide.dtype).toBe("f16");
    expect(values(wide)).toEqual([Number.POSITIVE_INFINITY, 2048, Number.NEGATIVE_INFINITY]);
  });
});

describe("reductions and softmax", () => {
  const x = tensor([1, 2, 3, 4, 5, 6], [2, 3], "f32");

  it("reduce along axis 0 and 1 (that axis becomes 1)", () => {
    const sum0 = reduce("sum", x, 0);
    expect(sum0.shape).toEqual([1, 3]);
    expect(values(sum0)).toEqual([5, 7, 9]);
    const sum1 = reduce("sum", x, 1);
    expect(sum1.shape).toEqual([2, 1]);
    expect(values(sum1)).toEqual([6, 15]);
    expect(values(reduce("sum", x))).toEqual([6, 15]); // default axis -1
    expect(values(reduce("max", x, 0))).toEqual([4, 5, 6]);
    expect(values(reduce("min", x, 1))).toEqual([1, 4]);
    expect(() => reduce("sum", x, 2)).toThrow(/out of range/);
  });

  it("sums in f64 and rounds once; wraps integers; NaN wins max", () => {
    // Step-by-step f16 rounding would stay at 2048.
    expect(values(reduce("sum", tensor([2048, 1, 1], [3], "f16"), 0))).toEqual([2050]);
    expect(values(reduce("sum", tensor([100, 100], [2], "i8"), 0))).toEqual([-56]);
    expect(reduce("max", tensor([1, Number.NaN, 3], [3], "f32"), 0).data[0]).toBeNaN();
    expect(Object.is(reduce("max", tensor([-0, 0], [2], "f32"), 0).data[0], 0)).toBe(true);
  });

  it("softmax of a row", () => {
    // e = [e^-2, e^-1, 1] = [0.1353352832, 0.3678794412, 1], sum 1.5032147244.
    const row = softmax(tensor([1, 2, 3], [1, 3], "f32"));
    expect(row.shape).toEqual([1, 3]);
    const expected = [0.09003057317038046, 0.24472847105479764, 0.6652409557748219];
    expected.forEach((value, i) => {
      expect(row.data[i]).toBe(Math.fround(value));
    });
    expect(values(softmax(tensor([0, 0], [2, 1], "f32"), 0))).toEqual([0.5, 0.5]);
    expect(values(softmax(tensor([0, Number.NEGATIVE_INFINITY], [2], "f32")))).toEqual([1, 0]);
    expect(
      softmax(tensor([Number.NEGATIVE_INFINITY, Number.NEGATIVE_INFINITY], [2], "f32")).data[0],
    ).toBeNaN();
  });
});

describe("layout", () => {
  const x = tensor([0, 1, 2, 3, 4, 5], [2, 3], "f32");

  it("transpose swaps the last two dims", () => {
    const t = transpose(x);
    expect(t.shape).toEqual([3, 2]);
    expect(values(t)).toEqual([0, 3, 1, 4, 2, 5]);
    expect(values(transpose(t))).toEqual(values(x));
  });

  it("view takes elements [start, start + size) in row-major order", () => {
    const v = view(x, 2, [2, 2]);
    expect(v.shape).toEqual([2, 2]);
    expect(values(v)).toEqual([2, 3, 4, 5]);
    expect(() => view(x, 3, [2, 2])).toThrow(/not within/);
  });

  it("block is a strided load of a 2-D block", () => {
    const m = tensor(
      Array.from({ length: 12 }, (_, i) => i),
      [3, 4],
      "f32",
    );
    expect(values(block(m, 1, 1, 2, 2))).toEqual([5, 6, 9, 10]);
    expect(() => block(m, 2, 0, 2, 1)).toThrow(/not within/);
  });
});

describe("composite math", () => {
  const x = tensor([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12], [2, 2, 3], "f32");

  it("reduces the last axis of every row", () => {
    const sums = compositeMath("sum", [x]);
    expect(sums.shape).toEqual([2, 2, 1]);
    expect(values(sums)).toEqual([6, 15, 24, 33]);
  });

  it("applies elementwise ops with a second input or a scalar", () => {
    expect(values(compositeMath("add", [x], [1]))[0]).toBe(2);
    expect(values(compositeMath("mul", [x, x]))[3]).toBe(16);
    expect(values(compositeMath("clamp", [x], [2, 3])).slice(0, 4)).toEqual([2, 2, 3, 3]);
    expect(values(compositeMath("cast", [x]))).toEqual(values(x));
    expect(values(compositeMath("softmax", [x]))).toEqual(values(softmax(x, -1)));
  });

  it("refuses what cannot run as a composite", () => {
    expect(() => compositeMath("where", [x, x])).toThrow(/cannot run/);
    expect(() => compositeMath("add", [x])).toThrow(/scalars\[0\]/);
    expect(() => compositeMath("clamp", [x], [1])).toThrow(/lo, hi/);
  });
});
