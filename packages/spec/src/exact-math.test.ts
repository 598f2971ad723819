import { describe, expect, it } from "vitest";
import { bigintToOddDouble, evaluateExactMath } from "./exact-math.js";

// 64-bit integers past 2^53 stay exact through the math ops (a double holds 2^60 + 1 as 2^60).
// Expectations by hand.

const P60 = 2n ** 60n;
const vec = (...values: bigint[]) => ({ values, shape: [values.length] });
const run = (
  op: string,
  operands: ReturnType<typeof vec>[],
  dtype: "i64" | "u64",
  scalars: (number | bigint)[] = [],
) => evaluateExactMath(op, operands, operands[0]?.shape ?? [1], null, { scalars, dtype });

describe("exact 64-bit integer math", () => {
  it("adds, subtracts, multiplies past 2^53 without rounding", () => {
    // (2^60 + 1) + (2^60 + 3) = 2^61 + 4; as doubles both operands would read 2^60.
    expect(run("add", [vec(P60 + 1n), vec(P60 + 3n)], "i64")).toEqual([2n ** 61n + 4n]);
    expect(run("add", [vec(P60 + 1n)], "i64", [P60 + 3n])).toEqual([2n ** 61n + 4n]);
    expect(run("sub", [vec(P60 + 3n)], "i64", [P60 + 1n])).toEqual([2n]);
    // (2^31 + 1)^2 = 2^62 + 2^32 + 1.
    expect(run("mul", [vec(2n ** 31n + 1n), vec(2n ** 31n + 1n)], "i64")).toEqual([
      2n ** 62n + 2n ** 32n + 1n,
    ]);
  });

  it("wraps u64 near 2^64 and i64 at 2^63", () => {
    // (2^64 - 1) + 2 = 2^64 + 1 -> 1; 0 - 1 -> 2^64 - 1; (2^64 - 3) * 2 = 2^65 - 6 -> 2^64 - 6.
    expect(run("add", [vec(2n ** 64n - 1n)], "u64", [2])).toEqual([1n]);
    expect(run("sub", [vec(0n)], "u64", [1])).toEqual([2n ** 64n - 1n]);
    expect(run("mul", [vec(2n ** 64n - 3n)], "u64", [2])).toEqual([2n ** 64n - 6n]);
    // i64 max + 1 = i64 min.
    expect(run("add", [vec(2n ** 63n - 1n)], "i64", [1])).toEqual([-(2n ** 63n)]);
  });

  it("divides as Triton: truncating, i64 min // -1 is i64 min, % -1 is 0", () => {
    const min = -(2n ** 63n);
    expect(run("div", [vec(min)], "i64", [-1])).toEqual([min]);
    expect(run("mod", [vec(min)], "i64", [-1])).toEqual([0n]);
    // -(2^60 + 7) / 2 = -(2^59 + 3) (toward zero), remainder -1.
    expect(run("div", [vec(-(P60 + 7n))], "i64", [2])).toEqual([-(2n ** 59n + 3n)]);
    expect(run("mod", [vec(-(P60 + 7n))], "i64", [2])).toEqual([-1n]);
    // u64: (2^64 - 1) / 3 = 6148914691236517205 exactly; x / 0 is all bits set.
    expect(run("div", [vec(2n ** 64n - 1n)], "u64", [3])).toEqual([6148914691236517205n]);
    expect(run("div", [vec(5n)], "u64", [0])).toEqual([2n ** 64n - 1n]);
  });

  it("compares, selects and reduces the exact values", () => {
    const cmp = evaluateExactMath("gt", [vec(P60 + 1n), vec(P60)], [1], null, { scalars: [], dtype: "i1" });
    expect([...(cmp as Float64Array)]).toEqual([1]); // equal as doubles, greater as integers
    const cond = { values: Float64Array.of(1, 0), shape: [2] };
    expect(
      evaluateExactMath("where", [cond, vec(P60 + 1n, P60 + 2n), vec(P60 + 3n, P60 + 4n)], [2], null, {
        scalars: [],
        dtype: "i64",
      }),
    ).toEqual([P60 + 1n, P60 + 4n]);
    const x = vec(P60 + 1n, P60 + 5n, P60 + 3n);
    const along = (op: string) =>
      evaluateExactMath(op, [x], op.startsWith("cum") ? [3] : [1], 0, { scalars: [], dtype: "i64" });
    expect(along("sum")).toEqual([3n * P60 + 9n]);
    expect(along("max")).toEqual([P60 + 5n]);
    expect(along("min")).toEqual([P60 + 1n]);
    expect(along("cumsum")).toEqual([P60 + 1n, 2n * P60 + 6n, 3n * P60 + 9n]);
    expect(evaluateExactMath("argmax", [x], [1], 0, { scalars: [], dtype: "i32" })).toEqual([1n]);
    // cumprod wraps: (2^32 + 1)^2 = 2^64 + 2^33 + 1 -> 2^33 + 1.
    expect(
      evaluateExactMath("cumprod", [vec(2n ** 32n + 1n, 2n ** 32n + 1n)], [2], 0, {
        scalars: [],
        dtype: "i64",
      }),
    ).toEqual([2n ** 32n + 1n, 2n ** 33n + 1n]);
  });

  it("shifts and masks all 64 bits", () => {
    // (2^60 + 1) << 3 = 2^63 + 8: u64 holds it, i64 reads bit 63 as the sign; << 4 drops bit 64.
    expect(run("shl", [vec(P60 + 1n)], "u64", [3])).toEqual([2n ** 63n + 8n]);
    expect(run("shl", [vec(P60 + 1n)], "i64", [3])).toEqual([-(2n ** 63n) + 8n]);
    expect(run("shl", [vec(P60 + 1n)], "u64", [4])).toEqual([16n]);
    expect(run("shr", [vec(2n ** 64n - 1n)], "u64", [4])).toEqual([2n ** 60n - 1n]); // logical
    expect(run("shr", [vec(-(P60 + 1n))], "i64", [60])).toEqual([-2n]); // arithmetic: floor(-(1 + 2^-60))
    expect(run("and", [vec(P60 + 5n)], "i64", [P60 + 3n])).toEqual([P60 + 1n]);
    expect(run("xor", [vec(P60 + 5n)], "i64", [P60 + 3n])).toEqual([6n]);
  });

  it("casts to and from other dtypes with one rounding", () => {
    // i64 -> f32: 2^60 + 2^36 + 1 is just above the midpoint of 2^60 and 2^60 + 2^37 (f32's
    // spacing there), so it rounds up; through the nearest double (2^60 + 2^36, the midpoint) and
    // then to f32 it would round to even, down to 2^60.
    const v = P60 + 2n ** 36n + 1n;
    const cast = evaluateExactMath("cast", [vec(v)], [1], null, {
      scalars: [],
      dtype: "f32",
    }) as Float64Array;
    expect(Math.fround(cast[0] as number)).toBe(2 ** 60 + 2 ** 37);
    // i64 -> i32 saturates, as every cast to an integer does (2^60 -> 2^31 - 1); i64 -> u64 too (-1 -> 0).
    expect(evaluateExactMath("cast", [vec(P60 + 5n)], [1], null, { scalars: [], dtype: "i32" })).toEqual([
      2n ** 31n - 1n,
    ]);
    expect(run("cast", [vec(-1n)], "u64")).toEqual([0n]);
    // A float operand (f32 3.75 -> i64) truncates toward zero in f64, exact below 2^63.
    const f = { values: Float64Array.of(3.75, 2 ** 62), shape: [2] };
    expect([
      ...(evaluateExactMath("cast", [f], [2], null, { scalars: [], dtype: "i64" }) as Float64Array),
    ]).toEqual([3, 2 ** 62]);
  });

  it("rounds BigInts to odd doubles past 2^53 only", () => {
    expect(bigintToOddDouble(2n ** 53n)).toBe(2 ** 53);
    expect(bigintToOddDouble(2n ** 53n + 1n)).toBe(2 ** 53 + 2); // 2^53 + 1 dropped a bit: the odd neighbour
    expect(bigintToOddDouble(-(P60 + 256n))).toBe(-(2 ** 60 + 256)); // exact: nothing dropped
  });
});
