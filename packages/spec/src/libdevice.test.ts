import { describe, expect, it } from "vitest";
import { evaluateMath, MATH_OPS } from "./index.js";
import { erf } from "./math-functions.js";

// The libdevice subset of the math op table (Triton's tl.extra.libdevice / tl.math): asin, acos,
// atan, atan2, sinh, cosh, erfinv, log1p, expm1, cbrt, hypot, evaluated in f64 (phase 2 rounds
// once to the dtype), with their PE_MATH cycles per vector.

const unary = (op: string, values: number[]) => [
  ...evaluateMath(
    op,
    [{ values: Float64Array.from(values), shape: [values.length] }],
    [values.length],
    null,
    { scalars: [] },
  ),
];
const binary = (op: string, a: number[], b: number[]) => [
  ...evaluateMath(
    op,
    [
      { values: Float64Array.from(a), shape: [a.length] },
      { values: Float64Array.from(b), shape: [b.length] },
    ],
    [a.length],
    null,
    { scalars: [] },
  ),
];

describe("libdevice ops", () => {
  it("asin, acos, atan, sinh, cosh, log1p, expm1, cbrt at hand-checked points", () => {
    expect(unary("asin", [1, -0, 2])).toEqual([Math.PI / 2, -0, Number.NaN]);
    expect(unary("asin", [0.5])[0]).toBeCloseTo(Math.PI / 6, 15);
    expect(unary("acos", [1, 0, -1])).toEqual([0, Math.PI / 2, Math.PI]);
    expect(unary("atan", [1, Number.POSITIVE_INFINITY])).toEqual([Math.PI / 4, Math.PI / 2]);
    expect(unary("sinh", [0, Math.log(2)])).toEqual([0, Math.sinh(Math.log(2))]);
    expect(unary("sinh", [Math.log(2)])[0]).toBeCloseTo(0.75, 15); // (2 - 1/2) / 2
    expect(unary("cosh", [Math.log(2)])[0]).toBeCloseTo(1.25, 15); // (2 + 1/2) / 2
    expect(unary("log1p", [1e-20, -1])).toEqual([1e-20, Number.NEGATIVE_INFINITY]); // log(1 + x) would give 0
    expect(unary("expm1", [1e-20])).toEqual([1e-20]);
    expect(unary("cbrt", [27, -8, -0])).toEqual([3, -2, -0]);
  });

  it("atan2(y, x) and hypot(x, y) are binary, a number allowed on either side", () => {
    expect(binary("atan2", [1, 1, -0], [1, -1, -1])).toEqual([Math.PI / 4, (3 * Math.PI) / 4, -Math.PI]);
    expect(binary("hypot", [3, 5, Number.POSITIVE_INFINITY], [4, 12, Number.NaN])).toEqual([
      5,
      13,
      Number.POSITIVE_INFINITY,
    ]);
    expect(MATH_OPS.atan2?.scalar).toBe(true);
    expect(MATH_OPS.hypot?.scalar).toBe(true);
  });

  it("erfinv inverts erf (within an ulp of 1), ±1 -> ±Inf, |y| > 1 -> NaN, -0 -> -0", () => {
    const ys = [0.1, 0.5, 0.9, -0.99, 0.999999, 1 - 2 ** -24, 1e-30];
    for (const [i, x] of unary("erfinv", ys).entries())
      expect(Math.abs(erf(x) - (ys[i] as number))).toBeLessThanOrEqual(2 ** -52);
    // erfinv(0.5) = 0.4769362762044699 (Abramowitz-Stegun tables: 0.476936276204470).
    expect(unary("erfinv", [0.5])[0]).toBeCloseTo(0.4769362762044699, 14);
    expect(unary("erfinv", [1, -1, 1.5, -0, Number.NaN])).toEqual([
      Number.POSITIVE_INFINITY,
      Number.NEGATIVE_INFINITY,
      Number.NaN,
      -0,
      Number.NaN,
    ]);
  });

  it("PE_MATH cycles per vector: 6 for one SFU op and a short polynomial, 10 for two SFU ops", () => {
    const cycles = Object.fromEntries(
      ["asin", "acos", "atan", "atan2", "sinh", "cosh", "erfinv", "log1p", "expm1", "cbrt", "hypot"].map(
        (op) => [op, MATH_OPS[op]?.cycles],
      ),
    );
    expect(cycles).toEqual({
      asin: 6,
      acos: 6,
      atan: 6,
      atan2: 10,
      sinh: 6,
      cosh: 6,
      erfinv: 10,
      log1p: 6,
      expm1: 6,
      cbrt: 6,
      hypot: 6,
    });
  });
});
