import { describe, expect, it } from "vitest";
import type { Dtype } from "./dtype.js";
import {
  MATH_OPS,
  MATH_SHAPES,
  type MathOpInfo,
  mathOutputShape,
  PUBLIC_MATH_OPS,
  SCALAR_OPS,
} from "./index.js";

const entries = Object.entries(MATH_OPS) as [string, MathOpInfo][];
const BOOLEAN_OPS = new Set(["lt", "le", "gt", "ge", "eq", "ne", "not"]);
const INDEX_OPS = new Set(["argmax", "argmin"]);
/** Random numbers of integer offsets: `randint` gives u32 words, `rand` and `randn` f32. */
const RANDOM_DTYPES: Readonly<Record<string, Dtype>> = { randint: "u32", rand: "f32", randn: "f32" };

/** The element function of an elementwise op (fails the test for a line op). */
function element(op: string) {
  const info = MATH_OPS[op];
  if (info?.shape !== "elementwise") throw new Error(`${op} is not elementwise`);
  return info.element;
}

/** The op's line function over `values` (stride 1); returns what it wrote. */
function line(op: string, values: readonly number[]): number[] {
  const info = MATH_OPS[op];
  if (info === undefined || (info.shape !== "reduce" && info.shape !== "row"))
    throw new Error(`${op} is not a line op`);
  const out = new Float64Array(values.length).fill(Number.NaN);
  info.line(Float64Array.from(values), 0, out, 0, values.length, 1);
  return info.shape === "reduce" ? [out[0] as number] : [...out];
}

describe("the math op table", () => {
  it("lists the 68 ops of the tl surface, fill, iota, copy and transpose internal", () => {
    const binary = "add sub mul div maximum minimum fma where";
    const logic = "lt le gt ge eq ne and or xor not pow";
    const unary = "clamp exp log sqrt rsqrt exp2 log2 abs sigmoid cos sin relu tanh erf gelu silu cast";
    const internal = "fill iota copy transpose";
    const reductions = "sum max min argmax argmin softmax cumsum";
    const libdevice = "asin acos atan atan2 sinh cosh erfinv log1p expm1 cbrt hypot";
    const integer = "mod shl shr floor ceil randint rand randn";
    const scans = "cumprod";
    expect(Object.keys(MATH_OPS)).toEqual(
      `${binary} ${logic} ${unary} ${internal} ${reductions} ${libdevice} ${integer} ${scans}`.split(" "),
    );
    const internals = new Set(internal.split(" "));
    expect(PUBLIC_MATH_OPS).toEqual(Object.keys(MATH_OPS).filter((op) => !internals.has(op)));
    expect([...SCALAR_OPS]).toEqual(
      "add sub mul div maximum minimum lt le gt ge eq ne and or xor pow atan2 hypot mod shl shr randint rand randn".split(
        " ",
      ),
    );
  });

  it("gives every op an evaluation, a timing, a shape rule and a dtype rule", () => {
    for (const [op, info] of entries) {
      const where = `op ${op}`;
      expect(MATH_SHAPES[info.shape], where).toBeDefined();
      if (info.shape === "elementwise") {
        expect(typeof info.element, where).toBe("function");
        // The element function takes at most three operands and scalars.
        expect(info.arity + info.params.length, where).toBeLessThanOrEqual(3);
      } else if (info.shape === "swap") {
        expect(info.params, where).toEqual(["dim1"]); // moves elements: evaluated by evaluateMath
      } else {
        expect(typeof info.line, where).toBe("function");
        expect(info.treePasses, where).toBeGreaterThan(0);
      }
      expect(info.cycles, where).toBeGreaterThan(0);
      const input: Dtype = info.inputDtypes?.[0] ?? "bf16";
      const inputs = Array.from({ length: info.arity }, () => input);
      const expected = info.target
        ? "i8"
        : BOOLEAN_OPS.has(op)
          ? "i1"
          : INDEX_OPS.has(op)
            ? "i32"
            : (RANDOM_DTYPES[op] ?? input);
      expect(info.dtype(inputs, info.target ? "i8" : undefined), where).toBe(expected);
    }
  });

  it("takes booleans and integers only in the logic ops, the random ops only on i32 and u32 seeds", () => {
    const restricted = entries
      .filter(([, info]) => info.inputDtypes !== null)
      .map(([op, info]) => [op, info.inputDtypes]);
    expect(restricted).toEqual([
      ["and", ["i1", "i8", "i32", "u32", "u8", "u16", "i16", "i64", "u64"]],
      ["or", ["i1", "i8", "i32", "u32", "u8", "u16", "i16", "i64", "u64"]],
      ["xor", ["i1", "i8", "i32", "u32", "u8", "u16", "i16", "i64", "u64"]],
      ["not", ["i1", "i8", "i32", "u32", "u8", "u16", "i16", "i64", "u64"]],
      ["shl", ["i8", "i32", "u32", "u8", "u16", "i16", "i64", "u64"]],
      ["shr", ["i8", "i32", "u32", "u8", "u16", "i16", "i64", "u64"]],
      ["randint", ["i32", "u32"]],
      ["rand", ["i32", "u32"]],
      ["randn", ["i32", "u32"]],
    ]);
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
      // An ALU op is 1, one special-function op 4, a short polynomial 6; compositions add up.
      lt: 1,
      and: 1,
      not: 1,
      rsqrt: 4,
      exp2: 4,
      log2: 4,
      tanh: 6,
      erf: 6,
      gelu: 8, // erf 6 + a multiply-add and a multiply 2
      silu: 7, // sigmoid 6 + a multiply 1
      pow: 9, // log2 4 + multiply 1 + exp2 4
      argmax: 2, // compare 1 + index select 1
      cumsum: 1,
      copy: 1,
      transpose: 1,
    });
    expect(MATH_OPS.sum?.treePasses).toBe(1);
    expect(MATH_OPS.softmax?.treePasses).toBe(2);
    expect(MATH_OPS.argmin?.treePasses).toBe(1);
    expect(MATH_OPS.cumsum?.treePasses).toBe(2); // up-sweep and down-sweep
  });
});

describe("shape and dtype rules", () => {
  it("a reduction makes its axis 1; elementwise and row ops keep the shape", () => {
    expect(mathOutputShape(MATH_OPS.sum as MathOpInfo, [2, 3, 4], 1)).toEqual([2, 1, 4]);
    expect(mathOutputShape(MATH_OPS.max as MathOpInfo, [2, 3], 0)).toEqual([1, 3]);
    expect(mathOutputShape(MATH_OPS.softmax as MathOpInfo, [2, 3], 1)).toEqual([2, 3]);
    expect(mathOutputShape(MATH_OPS.exp as MathOpInfo, [5], null)).toEqual([5]);
    expect(mathOutputShape(MATH_OPS.cumsum as MathOpInfo, [2, 3], 0)).toEqual([2, 3]);
    expect(mathOutputShape(MATH_OPS.argmax as MathOpInfo, [2, 3], 1)).toEqual([2, 1]);
    expect(mathOutputShape(MATH_OPS.transpose as MathOpInfo, [2, 3, 4], 0, [2])).toEqual([4, 3, 2]);
    expect([
      MATH_SHAPES.elementwise.axis,
      MATH_SHAPES.reduce.axis,
      MATH_SHAPES.row.axis,
      MATH_SHAPES.swap.axis,
    ]).toEqual([false, true, true, true]);
  });

  it("where has its values' dtype, cast its target, add its inputs'", () => {
    expect(MATH_OPS.where?.dtype(["i32", "f16", "f16"], undefined)).toBe("f16");
    expect(MATH_OPS.cast?.dtype(["f32"], "i8")).toBe("i8");
    expect(MATH_OPS.add?.dtype(["i32", "i32"], undefined)).toBe("i32");
    expect(MATH_OPS.fill?.dtype([], "bf16")).toBe("bf16");
    expect(MATH_OPS.lt?.dtype(["f16", "f16"], undefined)).toBe("i1");
    expect(MATH_OPS.where?.dtype(["i1", "bf16", "bf16"], undefined)).toBe("bf16");
    expect(MATH_OPS.argmax?.dtype(["f32"], undefined)).toBe("i32");
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

  it("comparisons, logic and pow, hand-computed", () => {
    const at = (op: string, a = 0, b = 0) => element(op)(a, b, 0, 0);
    expect(["lt", "le", "gt", "ge", "eq", "ne"].map((op) => at(op, 1, 2))).toEqual([1, 1, 0, 0, 0, 1]);
    expect(["lt", "le", "gt", "ge", "eq", "ne"].map((op) => at(op, 2, 2))).toEqual([0, 1, 0, 1, 1, 0]);
    // IEEE: NaN compares false, except ne.
    expect(["lt", "le", "gt", "ge", "eq", "ne"].map((op) => at(op, Number.NaN, 2))).toEqual([
      0, 0, 0, 0, 0, 1,
    ]);
    expect([at("and", 1, 0), at("or", 1, 0), at("xor", 1, 1), at("not", 0), at("not", 1)]).toEqual([
      0, 1, 0, 1, 0,
    ]);
    expect([at("and", 12, 10), at("or", 12, 10), at("xor", 12, 10)]).toEqual([8, 14, 6]); // 1100 vs 1010
    expect([at("pow", 2, 10), at("pow", 4, 0.5), at("pow", -2, 3), at("pow", 2, -1)]).toEqual([
      1024, 2, -8, 0.5,
    ]);
    // C's pow where JavaScript's ** differs: 1^NaN = 1, (-1)^Inf = 1; NaN^0 = 1 in both.
    expect([
      at("pow", 1, Number.NaN),
      at("pow", -1, Number.POSITIVE_INFINITY),
      at("pow", Number.NaN, 0),
    ]).toEqual([1, 1, 1]);
    expect(at("pow", -8, 1 / 3)).toBeNaN();
  });

  it("the new unary ops, hand-computed", () => {
    const at = (op: string, a = 0) => element(op)(a, 0, 0, 0);
    expect([
      at("rsqrt", 4),
      at("rsqrt", 0),
      at("exp2", 10),
      at("exp2", -2),
      at("log2", 1024),
      at("log2", 0.125),
    ]).toEqual([0.5, Number.POSITIVE_INFINITY, 1024, 0.25, 10, -3]);
    expect([at("tanh", 0), at("tanh", Number.POSITIVE_INFINITY), at("tanh", -40)]).toEqual([0, 1, -1]);
    expect(Object.is(at("erf", -0), -0)).toBe(true);
    // Reference values: Python's math.erf.
    const erfs: [number, number][] = [
      [0.5, 0.5204998778130465],
      [1, 0.8427007929497149],
      [2, 0.9953222650189527],
      [2.5, 0.999593047982555],
      [3, 0.9999779095030014],
      [4, 0.9999999845827421],
    ];
    for (const [x, erf] of erfs) {
      expect(Math.abs(at("erf", x) - erf), `erf(${x})`).toBeLessThan(1e-13);
      expect(Math.abs(at("erf", -x) + erf), `erf(${-x})`).toBeLessThan(1e-13);
    }
    expect([at("erf", 7), at("erf", Number.NEGATIVE_INFINITY)]).toEqual([1, -1]);
    expect(at("erf", Number.NaN)).toBeNaN();
    // gelu(x) = x Phi(x) = x (1 + erf(x / sqrt 2)) / 2: gelu(1) = (1 + 0.6826894921370859) / 2.
    expect(at("gelu", 1)).toBeCloseTo(0.8413447460685429, 14);
    expect(at("gelu", -1)).toBeCloseTo(-0.15865525393145707, 14);
    expect(at("gelu", 0)).toBe(0);
    // silu(x) = x / (1 + e^-x): silu(2) = 2 / (1 + 0.1353352832366127).
    expect(at("silu", 2)).toBeCloseTo(1.7615941559557646, 14);
    expect(at("silu", 0)).toBe(0);
  });

  it("argmax, argmin and cumsum over a line, hand-computed", () => {
    expect(line("argmax", [3, 7, 7, 1])).toEqual([1]); // the first of the tied 7s
    expect(line("argmin", [3, 1, 7, 1])).toEqual([1]);
    expect(line("argmax", [3, Number.NaN, 9, Number.NaN])).toEqual([1]); // the first NaN wins
    expect(line("argmin", [Number.NaN, -9])).toEqual([0]);
    expect(line("argmax", [Number.NEGATIVE_INFINITY, Number.NEGATIVE_INFINITY])).toEqual([0]);
    expect(line("cumsum", [1, 2, 3.5, -6.5])).toEqual([1, 3, 6.5, 0]);
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
