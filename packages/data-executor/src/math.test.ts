import { isKbError } from "@kb/errors";
import { MATH_OPS } from "@kb/oplog";
import { type Dtype, Tensor } from "@kb/tensor";
import { describe, expect, it } from "vitest";
import { applyMath } from "./math.js";

/** Rounds to f32 (an f32 output's values are read back as numbers). */
const F = Math.fround;

const f32 = (values: readonly number[], shape: readonly number[] = [values.length]) =>
  Tensor.fromArray([...values], shape, "f32");
const bool = (values: readonly number[]) => Tensor.fromArray([...values], [values.length], "i1");
const i32 = (values: readonly number[]) => Tensor.fromArray([...values], [values.length], "i32");
const values = (tensor: Tensor) => [...tensor.toFloat64Array()];

/** Triton's uint_to_uniform_float of a non-negative i32 `x`: f32(x) times f32(4.6566127342e-10). */
const uniform = (x: number) => Math.fround(Math.fround(x) * Math.fround(4.6566127342e-10));

/** One phase-2 case of an op: its operands and the hand-computed result. */
interface Case {
  readonly inputs: readonly Tensor[];
  readonly scalars?: readonly number[];
  readonly shapeOut: readonly number[];
  readonly axis?: number;
  readonly scalarIndex?: number;
  readonly dtype?: Dtype;
  readonly expected: readonly number[];
}

const x = f32([1, -2, 3, -4]);
const y = f32([2, 8, -1, 0.5]);

// A case for every op of the table, with its result worked out by hand (f32 results are exact here).
const CASES: Readonly<Record<string, Case>> = {
  add: { inputs: [x, y], shapeOut: [4], expected: [3, 6, 2, -3.5] },
  sub: { inputs: [x, y], shapeOut: [4], expected: [-1, -10, 4, -4.5] },
  mul: { inputs: [x], scalars: [0.5], shapeOut: [4], expected: [0.5, -1, 1.5, -2] },
  div: { inputs: [x, y], shapeOut: [4], expected: [0.5, -0.25, -3, -8] },
  maximum: { inputs: [x, y], shapeOut: [4], expected: [2, 8, 3, 0.5] },
  minimum: { inputs: [x], scalars: [0], shapeOut: [4], expected: [0, -2, 0, -4] },
  fma: { inputs: [x, y, x], shapeOut: [4], expected: [3, -18, 0, -6] },
  where: { inputs: [f32([1, 0, -1, 0]), x, y], shapeOut: [4], expected: [1, 8, 3, 0.5] },
  clamp: { inputs: [x], scalars: [-2.5, 2], shapeOut: [4], expected: [1, -2, 2, -2.5] },
  exp: { inputs: [f32([0])], shapeOut: [1], expected: [1] },
  log: { inputs: [f32([1, 0])], shapeOut: [2], expected: [0, Number.NEGATIVE_INFINITY] },
  sqrt: { inputs: [f32([6.25, -1])], shapeOut: [2], expected: [2.5, Number.NaN] },
  abs: { inputs: [x], shapeOut: [4], expected: [1, 2, 3, 4] },
  sigmoid: { inputs: [f32([0, Number.NEGATIVE_INFINITY])], shapeOut: [2], expected: [0.5, 0] },
  cos: { inputs: [f32([0])], shapeOut: [1], expected: [1] },
  sin: { inputs: [f32([0])], shapeOut: [1], expected: [0] },
  relu: { inputs: [x], shapeOut: [4], expected: [1, 0, 3, 0] },
  // 1/3 in f16: 0x3555 = 1365 / 4096.
  cast: { inputs: [f32([1 / 3, 2.5])], shapeOut: [2], dtype: "f16", expected: [1365 / 4096, 2.5] },
  fill: { inputs: [], scalars: [7], shapeOut: [3], expected: [7, 7, 7] },
  iota: { inputs: [], scalars: [-1], shapeOut: [3], dtype: "i32", expected: [-1, 0, 1] },
  sum: { inputs: [f32([1, 2, 3, 4, 5, 6], [2, 3])], shapeOut: [1, 3], axis: 0, expected: [5, 7, 9] },
  max: { inputs: [f32([1, 5, 3, 4, 2, 6], [2, 3])], shapeOut: [2, 1], axis: 1, expected: [5, 6] },
  min: { inputs: [f32([1, 5, 3, 4, 2, 6], [2, 3])], shapeOut: [2, 1], axis: -1, expected: [1, 2] },
  // Along axis 0 of [[0, 5], [0, 5]]: each column is two equal values, 1/2 each.
  softmax: { inputs: [f32([0, 5, 0, 5], [2, 2])], shapeOut: [2, 2], axis: 0, expected: [0.5, 0.5, 0.5, 0.5] },
  // Comparisons of x = [1, -2, 3, -4] and y = [2, 8, -1, 0.5] (or a scalar): 0 or 1 in i1.
  lt: { inputs: [x, y], shapeOut: [4], dtype: "i1", expected: [1, 1, 0, 1] },
  le: { inputs: [x], scalars: [-2], shapeOut: [4], dtype: "i1", expected: [0, 1, 0, 1] },
  gt: { inputs: [x, y], shapeOut: [4], dtype: "i1", expected: [0, 0, 1, 0] },
  ge: { inputs: [x], scalars: [1], shapeOut: [4], dtype: "i1", expected: [1, 0, 1, 0] },
  // NaN == NaN is false; 0 == -0 is true.
  eq: {
    inputs: [f32([1, Number.NaN, 0]), f32([1, Number.NaN, -0])],
    shapeOut: [3],
    dtype: "i1",
    expected: [1, 0, 1],
  },
  ne: {
    inputs: [f32([1, Number.NaN, 0]), f32([1, Number.NaN, -0])],
    shapeOut: [3],
    dtype: "i1",
    expected: [0, 1, 0],
  },
  and: {
    inputs: [bool([1, 1, 0, 0]), bool([1, 0, 1, 0])],
    shapeOut: [4],
    dtype: "i1",
    expected: [1, 0, 0, 0],
  },
  or: {
    inputs: [bool([1, 1, 0, 0]), bool([1, 0, 1, 0])],
    shapeOut: [4],
    dtype: "i1",
    expected: [1, 1, 1, 0],
  },
  // 12 ^ 10 = 0b1100 ^ 0b1010 = 0b0110; 5 ^ -1 = ~5 = -6.
  xor: { inputs: [i32([12, 5]), i32([10, -1])], shapeOut: [2], dtype: "i32", expected: [6, -6] },
  not: { inputs: [bool([1, 0])], shapeOut: [2], dtype: "i1", expected: [0, 1] },
  pow: { inputs: [f32([2, 9, 1])], scalars: [3], shapeOut: [3], expected: [8, 729, 1] },
  rsqrt: { inputs: [f32([4, 0.25])], shapeOut: [2], expected: [0.5, 2] },
  exp2: { inputs: [f32([3, -1])], shapeOut: [2], expected: [8, 0.5] },
  log2: { inputs: [f32([8, 0.5])], shapeOut: [2], expected: [3, -1] },
  tanh: { inputs: [f32([0, Number.POSITIVE_INFINITY])], shapeOut: [2], expected: [0, 1] },
  erf: {
    inputs: [f32([0, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY])],
    shapeOut: [3],
    expected: [0, 1, -1],
  },
  // gelu(2) = 2 * Phi(2) = 1 + erf(sqrt 2) = 1.9544997361036416, rounded to f32.
  gelu: { inputs: [f32([0, 2])], shapeOut: [2], expected: [0, Math.fround(1.9544997361036416)] },
  // silu(1) = 1 / (1 + e^-1) = 0.7310585786300049, rounded to f32.
  silu: { inputs: [f32([0, 1])], shapeOut: [2], expected: [0, Math.fround(0.7310585786300049)] },
  // Rows [1, 5, 5] and [2, NaN, 7]: the first of the tied 5s; the NaN.
  argmax: {
    inputs: [f32([1, 5, 5, 2, Number.NaN, 7], [2, 3])],
    shapeOut: [2, 1],
    axis: 1,
    dtype: "i32",
    expected: [1, 1],
  },
  argmin: {
    inputs: [f32([1, 5, 1, 2, Number.NaN, -7], [2, 3])],
    shapeOut: [2, 1],
    axis: 1,
    dtype: "i32",
    expected: [0, 1],
  },
  // Along axis 0 of [[1, 2, 3], [4, 5, 6]]: the second row is [1 + 4, 2 + 5, 3 + 6].
  cumsum: {
    inputs: [f32([1, 2, 3, 4, 5, 6], [2, 3])],
    shapeOut: [2, 3],
    axis: 0,
    expected: [1, 2, 3, 5, 7, 9],
  },
  // [[1], [2]] broadcast to [2, 3].
  copy: { inputs: [f32([1, 2], [2, 1])], shapeOut: [2, 3], expected: [1, 1, 1, 2, 2, 2] },
  // Axes 0 and 2 of [2, 1, 3] (values 0..5) swapped: out[k, 0, i] = in[i, 0, k].
  transpose: {
    inputs: [f32([0, 1, 2, 3, 4, 5], [2, 1, 3])],
    scalars: [2],
    shapeOut: [3, 1, 2],
    axis: 0,
    expected: [0, 3, 1, 4, 2, 5],
  },
  // The libdevice subset, each in f64 and rounded once to f32 (F = Math.fround).
  asin: { inputs: [f32([0, 1, -1])], shapeOut: [3], expected: [0, F(Math.PI / 2), F(-Math.PI / 2)] },
  acos: { inputs: [f32([1, 0])], shapeOut: [2], expected: [0, F(Math.PI / 2)] },
  atan: { inputs: [f32([0, 1])], shapeOut: [2], expected: [0, F(Math.PI / 4)] },
  // atan2(y, x): (1, 1) is pi/4, (0, -1) is pi.
  atan2: { inputs: [f32([1, 0]), f32([1, -1])], shapeOut: [2], expected: [F(Math.PI / 4), F(Math.PI)] },
  // sinh(1) = (e - 1/e) / 2, cosh(1) = (e + 1/e) / 2.
  sinh: { inputs: [f32([0, 1])], shapeOut: [2], expected: [0, F((Math.E - 1 / Math.E) / 2)] },
  cosh: { inputs: [f32([0, 1])], shapeOut: [2], expected: [1, F((Math.E + 1 / Math.E) / 2)] },
  // erfinv(0.5) = 0.476936276204469873... (tables of the inverse error function).
  erfinv: { inputs: [f32([0, 0.5])], shapeOut: [2], expected: [0, F(0.4769362762044699)] },
  log1p: { inputs: [f32([0, 1])], shapeOut: [2], expected: [0, F(Math.LN2)] },
  expm1: { inputs: [f32([0, 1])], shapeOut: [2], expected: [0, F(Math.E - 1)] },
  cbrt: { inputs: [f32([8, -27])], shapeOut: [2], expected: [2, -3] },
  // 3-4-5 and 5-12-13.
  hypot: { inputs: [f32([3, 5]), f32([4, 12])], shapeOut: [2], expected: [5, 13] },
  // C's fmod: 7 % 3 = 1, -7 % 3 = -1 (the dividend's sign), 5.5 % 3 = 2.5.
  mod: { inputs: [f32([7, -7, 5.5])], scalars: [3], shapeOut: [3], expected: [1, -1, 2.5] },
  // 3 << 4 = 48; -1 << 31 = -2^31 (wraps).
  shl: { inputs: [i32([3, -1]), i32([4, 31])], shapeOut: [2], dtype: "i32", expected: [48, -2147483648] },
  // -16 >> 2 = -4 (arithmetic on i32).
  shr: { inputs: [i32([-16, 16])], scalars: [2], shapeOut: [2], dtype: "i32", expected: [-4, 4] },
  floor: { inputs: [f32([1.5, -1.5, 2])], shapeOut: [3], expected: [1, -2, 2] },
  ceil: { inputs: [f32([1.5, -1.5, 2])], shapeOut: [3], expected: [2, -1, 2] },
  // Philox 4x32-10 of key (0, 0) and counter (0, 0, 0, 0) is 6627e8d5 e169c58d ... (Random123's
  // known answer): seed 0 at offset 0. randint is the first word; rand its f32 times Triton's
  // scale (positive as an i32); randn Box-Muller of both words in f32 (the second is negative as
  // an i32: -x - 1 = 0x1e963a72).
  randint: {
    inputs: [i32([0])],
    scalars: [0],
    scalarIndex: 0,
    shapeOut: [1],
    dtype: "u32",
    expected: [0x6627e8d5],
  },
  rand: {
    inputs: [i32([0])],
    scalars: [0],
    scalarIndex: 0,
    shapeOut: [1],
    expected: [uniform(0x6627e8d5)],
  },
  randn: {
    inputs: [i32([0])],
    scalars: [0],
    scalarIndex: 0,
    shapeOut: [1],
    expected: [
      Math.fround(
        Math.fround(Math.sqrt(Math.fround(-2 * Math.fround(Math.log(uniform(0x6627e8d5)))))) *
          Math.fround(Math.cos(Math.fround(Math.fround(2 * Math.PI) * uniform(0x1e963a72)))),
      ),
    ],
  }, // Prefix products down the columns of [[1, 2, 3], [4, 0.5, -2]]: [[1, 2, 3], [4, 1, -6]].
  cumprod: {
    inputs: [f32([1, 2, 3, 4, 0.5, -2], [2, 3])],
    shapeOut: [2, 3],
    axis: 0,
    expected: [1, 2, 3, 4, 1, -6],
  },
};

describe("applyMath: every op of the table in phase 2", () => {
  it("has a hand-computed case for every op", () => {
    expect(Object.keys(CASES).sort()).toEqual(Object.keys(MATH_OPS).sort());
  });

  for (const [op, c] of Object.entries(CASES)) {
    it(`${op}`, () => {
      const dtype = c.dtype ?? "f32";
      const out = applyMath(op, c.inputs, c.shapeOut, dtype, c.axis ?? null, c.scalars ?? [], c.scalarIndex);
      expect(out.dtype).toBe(dtype);
      expect(out.shape).toEqual(c.shapeOut);
      expect(values(out)).toEqual(c.expected);
    });
  }

  it("broadcasts operands to the output shape (numpy's rules)", () => {
    // [[1], [2]] + [10, 20, 30]: a column against a row.
    const column = f32([1, 2], [2, 1]);
    const row = f32([10, 20, 30]);
    expect(values(applyMath("add", [column, row], [2, 3], "f32", null, []))).toEqual([
      11, 21, 31, 12, 22, 32,
    ]);
    // fma of [2, 3], [3] and [2, 1]: x * y + z with y a row and z a column.
    const fma = applyMath(
      "fma",
      [f32([1, 2, 3, 4, 5, 6], [2, 3]), f32([2, 0, 1]), column],
      [2, 3],
      "f32",
      null,
      [],
    );
    expect(values(fma)).toEqual([3, 1, 4, 10, 2, 8]);
  });

  it("puts a scalar at its operand's place: 1 / x and 0 - x", () => {
    expect(values(applyMath("div", [f32([2, 4])], [2], "f32", null, [1], 0))).toEqual([0.5, 0.25]);
    expect(values(applyMath("sub", [f32([2, -4])], [2], "f32", null, [0], 0))).toEqual([-2, 4]);
    expect(values(applyMath("sub", [f32([2, -4])], [2], "f32", null, [0]))).toEqual([2, -4]);
  });

  it("where takes an i1 cond with values of another dtype, broadcast", () => {
    const cond = bool([1, 0, 1]);
    const out = applyMath("where", [cond, f32([1, 2, 3]), f32([-1], [1])], [3], "f32", null, []);
    expect(values(out)).toEqual([1, -1, 3]);
  });

  it("rounds once to the output dtype: 1 + 2^-11 in f16 is 1 (a tie, to even)", () => {
    const one = Tensor.fromArray([1], [1], "f16");
    expect(values(applyMath("add", [one], [1], "f16", null, [2 ** -11]))).toEqual([1]);
    expect(values(applyMath("add", [one], [1], "f16", null, [2 ** -11 + 2 ** -20]))).toEqual([1 + 2 ** -10]);
  });
});

describe("applyMath: operands that do not fit the op", () => {
  const code = (run: () => unknown) => {
    try {
      run();
    } catch (error) {
      if (isKbError(error)) return [error.code, error.message];
      throw error;
    }
    throw new Error("expected a KbError");
  };

  it("names the op and what is missing", () => {
    expect(code(() => applyMath("tanhh", [x], [4], "f32", null, []))).toEqual([
      "OPLOG_INVALID",
      '[OPLOG_INVALID] unknown math op "tanhh".',
    ]);
    expect(code(() => applyMath("fma", [x, y], [4], "f32", null, []))[1]).toContain(
      'math op "fma" needs 3 input(s), got 2.',
    );
    expect(code(() => applyMath("add", [x], [4], "f32", null, []))[1]).toContain(
      'math op "add" has one input and no scalar.',
    );
    expect(code(() => applyMath("clamp", [x], [4], "f32", null, [0]))[1]).toContain(
      'math op "clamp" needs scalars [lo, hi], got 1.',
    );
    expect(code(() => applyMath("exp", [x], [2], "f32", null, []))[1]).toContain(
      'math op "exp": an input of shape [4] does not broadcast to the output\'s [2].',
    );
    expect(code(() => applyMath("sub", [x], [4], "f32", null, [1], 2))[1]).toContain(
      'math op "sub": scalar_index 2 is not an operand of 2.',
    );
    expect(code(() => applyMath("sum", [x], [1], "f32", 1, []))[1]).toContain(
      'math op "sum": axis 1 is out of range for [4].',
    );
  });
});
