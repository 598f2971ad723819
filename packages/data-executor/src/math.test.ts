import { isKbError } from "@kb/errors";
import { MATH_OPS } from "@kb/oplog";
import { type Dtype, Tensor } from "@kb/tensor";
import { describe, expect, it } from "vitest";
import { applyMath } from "./math.js";

const f32 = (values: readonly number[], shape: readonly number[] = [values.length]) =>
  Tensor.fromArray([...values], shape, "f32");
const values = (tensor: Tensor) => [...tensor.toFloat64Array()];

/** One phase-2 case of an op: its operands and the hand-computed result. */
interface Case {
  readonly inputs: readonly Tensor[];
  readonly scalars?: readonly number[];
  readonly shapeOut: readonly number[];
  readonly axis?: number;
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
};

describe("applyMath: every op of the table in phase 2", () => {
  it("has a hand-computed case for every op", () => {
    expect(Object.keys(CASES).sort()).toEqual(Object.keys(MATH_OPS).sort());
  });

  for (const [op, c] of Object.entries(CASES)) {
    it(`${op}`, () => {
      const dtype = c.dtype ?? "f32";
      const out = applyMath(op, c.inputs, c.shapeOut, dtype, c.axis ?? null, c.scalars ?? []);
      expect(out.dtype).toBe(dtype);
      expect(out.shape).toEqual(c.shapeOut);
      expect(values(out)).toEqual(c.expected);
    });
  }

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
      'math op "exp": an input has 4 elements, the output 2.',
    );
    expect(code(() => applyMath("sum", [x], [1], "f32", 1, []))[1]).toContain(
      'math op "sum": axis 1 is out of range for [4].',
    );
  });
});
