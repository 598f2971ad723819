import { describe, expect, it } from "vitest";
import { evaluateExactMath } from "./exact-math.js";
import { type IntegerType, integerElement, integerType, wrapInteger } from "./integer-ops.js";

// The README's rule (packages/tl/README.md, Semantics): a negative number operand of an unsigned op
// is its two's complement, as Triton converts a literal; div truncates, mod takes the dividend's sign.

const type = (dtype: "u8" | "u16" | "u32" | "i32"): IntegerType => integerType(dtype) as IntegerType;
const apply = (op: string, dtype: "u8" | "u16" | "u32" | "i32", a: number, b: number): number =>
  wrapInteger(integerElement(op, type(dtype), () => Number.NaN)(a, b, 0, 0), type(dtype));

describe("integer div and mod with a negative number operand", () => {
  it("read it as its two's complement on the unsigned types", () => {
    expect(apply("div", "u32", 3, -3)).toBe(0); // 3 / (2^32 - 3), the README's example
    expect(apply("mod", "u16", 3, -1)).toBe(3); // 3 % 65535 (tl-fuzz seed 20261124, kernel 5506)
    expect(apply("mod", "u32", 7, -3)).toBe(7);
    expect(apply("div", "u8", 200, -1)).toBe(0); // 200 / 255
    expect(apply("div", "u8", -1, 16)).toBe(15); // 255 / 16
    expect(apply("mod", "u8", -1, 16)).toBe(15);
  });

  it("keep the sign on the signed types: truncation toward zero, the dividend's sign", () => {
    expect(apply("div", "i32", -7, 2)).toBe(-3);
    expect(apply("mod", "i32", -7, 3)).toBe(-1);
    expect(apply("mod", "i32", 7, -3)).toBe(1);
  });

  it("give all bits set for a division by zero and the dividend for mod by zero", () => {
    expect(apply("div", "u16", 5, 0)).toBe(65535);
    expect(apply("mod", "u16", 5, 0)).toBe(5);
    expect(apply("div", "i32", 5, 0)).toBe(-1);
  });
});

describe("the 64-bit types' exact evaluation with a negative number operand", () => {
  const exact = (op: string, value: bigint, scalar: number, dtype: "u64" | "i64") =>
    evaluateExactMath(op, [{ values: [value], shape: [1] }], [1], null, { scalars: [scalar], dtype });

  it("reads it as its two's complement on u64 (tl-fuzz seed 20261124: mod(x, -1) on u64 is x)", () => {
    expect(exact("mod", 3n, -1, "u64")).toEqual([3n]); // 3 % (2^64 - 1)
    expect(exact("div", 3n, -3, "u64")).toEqual([0n]);
    expect(exact("add", 5n, -1, "u64")).toEqual([4n]);
  });

  it("keeps the sign on i64", () => {
    expect(exact("mod", 7n, -3, "i64")).toEqual([1n]);
    expect(exact("div", -7n, 2, "i64")).toEqual([-3n]);
  });
});
