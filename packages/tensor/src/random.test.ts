import { isKbError } from "@kb/errors";
import { describe, expect, it } from "vitest";
import { Tensor } from "./index.js";
import { Xoshiro128StarStar } from "./random.js";

describe("Xoshiro128StarStar", () => {
  it("matches the reference C code (xoshiro128** seeded by four splitmix32 outputs)", () => {
    // From Vigna's xoshiro128starstar.c, with s[0..3] = splitmix32() x4 from the state `seed`
    // (state += 0x9e3779b9; z = state; z = (z ^ z >> 16) * 0x85ebca6b; z = (z ^ z >> 13) * 0xc2b2ae35;
    // return z ^ z >> 16), compiled with gcc.
    const expected: Record<number, number[]> = {
      0: [0xe308dc58, 0x4392d0e4, 0x03318f97, 0xac593a63, 0x08535f0a, 0x83532d1f],
      1: [0x9190299e, 0xc1017b27, 0xe3af522f, 0x7d71fb05, 0x787816c2, 0xfbbe0c00],
      4294967295: [0x31d28326, 0x728481f8, 0x8c70d5d1, 0x7066baf4, 0x3a707f2c, 0x3ed16aa6],
    };
    for (const [seed, outputs] of Object.entries(expected)) {
      const generator = new Xoshiro128StarStar(Number(seed));
      expect(outputs.map(() => generator.nextUint32())).toEqual(outputs);
    }
  });

  it("draws integers below a bound without bias (full 2^32 range included)", () => {
    const generator = new Xoshiro128StarStar(7);
    const counts = [0, 0, 0];
    for (let i = 0; i < 3000; i++) counts[generator.nextBelow(3)]! += 1;
    for (const count of counts) expect(count).toBeGreaterThan(900);
    const full = new Xoshiro128StarStar(0);
    expect(full.nextBelow(2 ** 32)).toBe(0xe308dc58);
  });
});

describe("Tensor.random", () => {
  it("is deterministic: the same seed gives the same bytes, another seed other bytes", () => {
    for (const dtype of ["f32", "f16", "bf16", "i8", "i32", "i1"] as const) {
      const a = Tensor.random([16, 16], dtype, { seed: 42 });
      expect(a.equals(Tensor.random([16, 16], dtype, { seed: 42 }))).toBe(true);
      expect(a.equals(Tensor.random([16, 16], dtype, { seed: 43 }))).toBe(false);
    }
    expect(Tensor.random([4], "f32").equals(Tensor.random([4], "f32", { seed: 0 }))).toBe(true);
  });

  it("fixes the stream: f32 elements are low + (high - low) * next() / 2^32, rounded", () => {
    const values = Tensor.random([2], "f32").toFloat64Array();
    expect(values[0]).toBe(Math.fround(-1 + 2 * (0xe308dc58 / 2 ** 32)));
    expect(values[1]).toBe(Math.fround(-1 + 2 * (0x4392d0e4 / 2 ** 32)));
  });

  it("keeps floats in [low, high], spread over the interval, rounded to the dtype", () => {
    for (const dtype of ["f32", "f16", "bf16"] as const) {
      const values = Tensor.random([10000], dtype, { seed: 3 }).toFloat64Array();
      expect(Math.min(...values)).toBeGreaterThanOrEqual(-1);
      expect(Math.max(...values)).toBeLessThanOrEqual(1);
      expect(Math.min(...values)).toBeLessThan(-0.99);
      expect(Math.max(...values)).toBeGreaterThan(0.99);
    }
    const shifted = Tensor.random([1000], "f16", { seed: 1, low: 10, high: 20 }).toFloat64Array();
    expect(Math.min(...shifted)).toBeGreaterThanOrEqual(10);
    expect(Math.max(...shifted)).toBeLessThanOrEqual(20);
    expect(Tensor.random([3], "f32", { low: 5, high: 5 }).toFloat64Array()).toEqual(
      new Float64Array([5, 5, 5]),
    );
  });

  it("draws integers uniformly in [low, high], both included (default -8..8)", () => {
    const values = Tensor.random([10000], "i8", { seed: 5 }).toFloat64Array();
    const seen = new Set(values);
    expect([...seen].sort((a, b) => a - b)).toEqual(Array.from({ length: 17 }, (_, i) => i - 8));
    const bytes = Tensor.random([1000], "i32", { low: 0, high: 1 }).toFloat64Array();
    expect(new Set(bytes)).toEqual(new Set([0, 1]));
    const full = Tensor.random([1000], "i32", { low: -2147483648, high: 2147483647 }).toFloat64Array();
    expect(Math.min(...full)).toBeLessThan(-2e9);
    expect(Math.max(...full)).toBeGreaterThan(2e9);
  });

  it("rejects bad seeds and bounds with TENSOR_INVALID", () => {
    const bad = [
      () => Tensor.random([2], "f32", { seed: -1 }),
      () => Tensor.random([2], "f32", { seed: 1.5 }),
      () => Tensor.random([2], "f32", { seed: 2 ** 32 }),
      () => Tensor.random([2], "f32", { low: 1, high: 0 }),
      () => Tensor.random([2], "f32", { low: Number.NaN }),
      () => Tensor.random([2], "f32", { low: -1e308, high: 1e308 }),
      () => Tensor.random([2], "i8", { high: 200 }),
      () => Tensor.random([2], "i32", { low: 0.5 }),
    ];
    for (const call of bad) {
      let error: unknown;
      try {
        call();
      } catch (caught) {
        error = caught;
      }
      expect(isKbError(error, "TENSOR_INVALID")).toBe(true);
    }
    expect(() => Tensor.random([2], "i8", { high: 200 })).toThrow(
      "Tensor.random(i8 [2]): expected integer bounds in [-128, 127], got low -8 and high 200.",
    );
  });
});
