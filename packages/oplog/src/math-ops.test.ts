import { describe, expect, it } from "vitest";
import {
  MATH_OPS,
  MATH_SHAPES,
  type MathOpInfo,
  mathOutputShape,
  PUBLIC_MATH_OPS,
  SCALAR_OPS,
} from "./index.js";
import type { Dtype } from "./schema.js";

const entries = Object.entries(MATH_OPS) as [string, MathOpInfo][];

/** The element function of an elementwise op (fails the test for a line op). */
function element(op: string) {
  const info = MATH_OPS[op];
  if (info?.shape !== "elementwise") throw new Error(`${op} is not elementwise`);
  return info.element;
}

/** The op's line function over `values` (stride 1); returns what it wrote. */
function line(op: string, values: readonly number[]): number[] {
  const info = MATH_OPS[op];
  if (info === undefined || info.shape === "elementwise") throw new Error(`${op} is not a line op`);
  const out = new Float64Array(values.length).fill(Number.NaN);
  info.line(Float64Array.from(values), 0, out, 0, values.length, 1);
  return info.shape === "reduce" ? [out[0] as number] : [...out];
}

describe("the math op table", () => {
  it("lists the 24 ops of the tl surface, fill and iota internal", () => {
    const names =
      "add sub mul div maximum minimum fma where clamp exp log sqrt abs sigmoid cos sin relu cast";
    const internal = "fill iota";
    const reductions = "sum max min softmax";
    expect(Object.keys(MATH_OPS)).toEqual(`${names} ${internal} ${reductions}`.split(" "));
    expect(PUBLIC_MATH_OPS).toEqual(Object.keys(MATH_OPS).filter((op) => op !== "fill" && op !== "iota"));
    expect([...SCALAR_OPS]).toEqual(["add", "sub", "mul", "div", "maximum", "minimum"]);
  });

  it("gives every op an evaluation, a timing, a shape rule and a dtype rule", () => {
    for (const [op, info] of entries) {
      const where = `op ${op}`;
      expect(MATH_SHAPES[info.shape], where).toBeDefined();
      if (info.shape === "elementwise") {
        expect(typeof info.element, where).toBe("function");
        // The element function takes at most three operands and scalars.
        expect(info.arity + info.params.length, where).toBeLessThanOrEqual(3);
      } else {
        expect(typeof info.line, where).toBe("function");
        expect(info.treePasses, where).toBeGreaterThan(0);
      }
      expect(info.cycles, where).toBeGreaterThan(0);
      const inputs = Array.from({ length: info.arity }, (): Dtype => "bf16");
      expect(info.dtype(inputs, info.target ? "i8" : undefined), where).toBe(info.target ? "i8" : "bf16");
    }
  });

  it("does not answer prototype names", () => {
    expect(MATH_OPS.toString).toBeUndefined();
    expect(MATH_OPS.constructor).toBeUndefined();
  });

  it("keeps the default PE_MATH cycles per vector", () => {
    const cycles = Object.fromEntries(entries.map(([op, info]) => [op, info.cycles]));
    expect(cycles).toMatchObject({
      add: 1,
      div: 4,
      clamp: 2,
      exp: 4,
      sigmoid: 6,
      cos: 6,
      sum: 1,
      softmax: 11,
    });
    expect(MATH_OPS.sum?.treePasses).toBe(1);
    expect(MATH_OPS.softmax?.treePasses).toBe(2);
  });
});

describe("shape and dtype rules", () => {
  it("a reduction makes its axis 1; elementwise and row ops keep the shape", () => {
    expect(mathOutputShape(MATH_OPS.sum as MathOpInfo, [2, 3, 4], 1)).toEqual([2, 1, 4]);
    expect(mathOutputShape(MATH_OPS.max as MathOpInfo, [2, 3], 0)).toEqual([1, 3]);
    expect(mathOutputShape(MATH_OPS.softmax as MathOpInfo, [2, 3], 1)).toEqual([2, 3]);
    expect(mathOutputShape(MATH_OPS.exp as MathOpInfo, [5], null)).toEqual([5]);
    expect([MATH_SHAPES.elementwise.axis, MATH_SHAPES.reduce.axis, MATH_SHAPES.row.axis]).toEqual([
      false,
      true,
      true,
    ]);
  });

  it("where has its values' dtype, cast its target, add its inputs'", () => {
    expect(MATH_OPS.where?.dtype(["i32", "f16", "f16"], undefined)).toBe("f16");
    expect(MATH_OPS.cast?.dtype(["f32"], "i8")).toBe("i8");
    expect(MATH_OPS.add?.dtype(["i32", "i32"], undefined)).toBe("i32");
    expect(MATH_OPS.fill?.dtype([], "bf16")).toBe("bf16");
  });
});

describe("evaluation in f64", () => {
  it("elementwise ops, hand-computed", () => {
    const at = (op: string, a = 0, b = 0, c = 0, index = 0) => element(op)(a, b, c, index);
    expect([at("add", 2, 3), at("sub", 2, 3), at("mul", 2, 3), at("div", 1, 4)]).toEqual([5, -1, 6, 0.25]);
    expect([at("maximum", 1, 2), at("maximum", Number.NaN, 1), at("maximum", 1, Number.NaN)]).toEqual([
      2,
      Number.NaN,
      Number.NaN,
    ]);
    expect(Object.is(at("maximum", -0, 0), -0)).toBe(true); // the first operand on a tie
    expect([at("minimum", 1, 2), at("minimum", 2, Number.NaN)]).toEqual([1, Number.NaN]);
    expect(Object.is(at("minimum", 0, -0), 0)).toBe(true);
    expect(at("fma", 2, 3, 4)).toBe(10);
    expect([at("where", 0, 1, 2), at("where", -3, 1, 2), at("where", Number.NaN, 1, 2)]).toEqual([2, 1, 1]);
    expect([at("clamp", 5, 0, 1), at("clamp", -5, 0, 1), at("clamp", 0.5, 0, 1)]).toEqual([1, 0, 0.5]);
    expect([at("exp", 0), at("log", 1), at("sqrt", 6.25), at("abs", -3)]).toEqual([1, 0, 2.5, 3]);
    expect([at("sigmoid", 0), at("cos", 0), at("sin", 0), at("relu", -2), at("relu", 1.5)]).toEqual([
      0.5, 1, 0, 0, 1.5,
    ]);
    expect(Object.is(at("relu", -0), 0)).toBe(true);
    expect(at("cast", 1.75)).toBe(1.75);
    expect([at("fill", 7, 0, 0, 5), at("iota", 3, 0, 0, 2)]).toEqual([7, 5]);
  });

  it("reductions and softmax over a line, hand-computed", () => {
    expect(line("sum", [1, 2, 3.5])).toEqual([6.5]);
    expect(line("max", [1, -4, 3])).toEqual([3]);
    expect(line("min", [1, -4, 3])).toEqual([-4]);
    expect(line("max", [1, Number.NaN])).toEqual([Number.NaN]);
    expect(line("softmax", [2, 2, 2, 2])).toEqual([0.25, 0.25, 0.25, 0.25]);
    const [low, high] = line("softmax", [0, Math.log(3)]) as [number, number];
    expect(low).toBeCloseTo(0.25, 15);
    expect(high).toBeCloseTo(0.75, 15);
    // A line of only -Inf: -Inf - -Inf is NaN.
    expect(line("softmax", [Number.NEGATIVE_INFINITY, Number.NEGATIVE_INFINITY])).toEqual([
      Number.NaN,
      Number.NaN,
    ]);
  });

  it("a line reads and writes with its stride and bases", () => {
    // x = [[1, 2], [3, 4]]: the line of column 1 is (2, 4); out[1] and out[3] get its softmax.
    const x = Float64Array.from([1, 2, 3, 4]);
    const out = new Float64Array(4);
    const softmax = MATH_OPS.softmax as MathOpInfo & { shape: "row" };
    softmax.line(x, 1, out, 1, 2, 2);
    const e = Math.exp(-2);
    expect([...out]).toEqual([0, e / (e + 1), 0, 1 / (e + 1)]);
    const sum = MATH_OPS.sum as MathOpInfo & { shape: "reduce" };
    sum.line(x, 1, out, 0, 2, 2);
    expect(out[0]).toBe(6);
  });
});
