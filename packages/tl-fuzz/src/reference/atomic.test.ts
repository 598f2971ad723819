import { describe, expect, it } from "vitest";
import { atomic } from "./atomic.js";
import { tensor } from "./tensor.js";

// The README's atomics: one call's elements in row-major order, each seeing the earlier ones'
// writes; old values returned (0 where the mask is off); f rounded to the dtype, integers wrap.
describe("the evaluator's atomics", () => {
  const i32 = (values: number[]) => tensor(values, [values.length], "i32");

  it("atomicAdd with a repeated offset: the second element sees the first's write", () => {
    const memory = Float64Array.from([10, 20, 30]);
    const old = atomic("add", memory, "i32", i32([1, 2, 4]), i32([2, 0, 2]));
    expect([...old.data]).toEqual([30, 10, 31]);
    expect([...memory]).toEqual([12, 20, 35]);
  });

  it("integer sums wrap modulo 2^32; float sums round to the dtype at every element", () => {
    const ints = Float64Array.from([2147483647]);
    atomic("add", ints, "i32", i32([1]), i32([0]));
    expect([...ints]).toEqual([-2147483648]);
    // f16: 2048 + 1 rounds to 2048 (ties to even), twice: 2048, not 2050.
    const halves = Float64Array.from([2048]);
    atomic("add", halves, "f16", tensor([1, 1], [2], "f16"), i32([0, 0]));
    expect([...halves]).toEqual([2048]);
  });

  it("max and min keep the larger / smaller, NaN when either is NaN; masked-off elements return 0", () => {
    const memory = Float64Array.from([1, 5, Number.NaN]);
    const val = tensor([3, 2, 7, 9], [4], "f32");
    const mask = i32([1, 1, 1, 0]);
    const old = atomic("max", memory, "f32", val, i32([0, 1, 2, 0]), mask);
    expect([...old.data]).toEqual([1, 5, Number.NaN, 0]);
    expect([...memory]).toEqual([3, 5, Number.NaN]);
    atomic("min", memory, "f32", tensor([-1, Number.NaN], [2], "f32"), i32([0, 1]));
    expect([...memory]).toEqual([-1, Number.NaN, Number.NaN]);
  });

  it("xchg writes val; cas writes val only where old == cmp (the lock: the first call wins)", () => {
    const memory = Float64Array.from([0, 7]);
    expect([...atomic("xchg", memory, "i32", i32([4]), i32([1])).data]).toEqual([7]);
    const lock = atomic("cas", memory, "i32", i32([1, 1]), i32([0, 0]), null, i32([0, 0]));
    expect([...lock.data]).toEqual([0, 1]); // the first element took it, the second saw 1
    expect([...memory]).toEqual([1, 4]);
  });
});
