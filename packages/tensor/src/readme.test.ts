import { readmeExample } from "@kb/tooling/readme-example";
import { describe, expect, it } from "vitest";
import { f32ToF16Bits, roundToDtype, Tensor } from "./index.js";

// The example of packages/tensor/README.md, run as written: `console` is a local that collects what
// the example prints, and the last test checks the code below still is the README's.
describe("README example", () => {
  it("builds, reads, rounds and reinterprets tensors", () => {
    const printed: unknown[] = [];
    const console = { log: (value: unknown) => printed.push(value) };
    // README example start

    // A 2x3 f16 tensor from numbers: each is rounded to the nearest f16, ties to even.
    const a = Tensor.fromArray([1, 2, 3, 4, 5, 1 / 3], [2, 3], "f16");
    console.log(String(a)); // Tensor(f16 [2, 3])
    console.log(a.get(1, 2)); // 0.333251953125, the f16 nearest 1/3
    console.log(a.strides); // [ 3, 1 ] (in elements)
    a.set([0, 0], 70000); // past the f16 range: stored as Infinity
    console.log(a.getFlat(0)); // Infinity

    // Storage is little-endian and row-major, the byte layout of device memory.
    console.log(f32ToF16Bits(5).toString(16)); // 4500
    console.log([...a.bytes.subarray(8, 10)]); // [ 0, 69 ]: element [1, 1] = 5 = 0x4500
    console.log(a.reinterpret("i8").shape); // [ 2, 6 ]: the same bytes, read as int8

    // Integers round half to even and saturate; NaN stores 0.
    const q = Tensor.fromArray([2.5, 3.5, -300, Number.NaN], [4], "i8");
    console.log([...q.toFloat64Array()]); // [ 2, 4, -128, 0 ]
    console.log(roundToDtype(1 + 3 * 2 ** -8, "bf16")); // 1.015625: a tie between 1 + 2^-7 and 1 + 2^-6, to even

    // Deterministic inputs (xoshiro128**, no Math.random): the same seed gives the same bytes.
    const x = Tensor.random([128, 64], "bf16", { seed: 7 }); // uniform in [-1, 1]
    console.log(x.equals(Tensor.random([128, 64], "bf16", { seed: 7 }))); // true
    const labels = Tensor.random([8], "i32", { seed: 1, low: 0, high: 9 }); // integers in [0, 9]
    console.log(labels.toFloat64Array().every((v) => v >= 0 && v <= 9)); // true

    // Bulk work goes through typed arrays: decode once, compute, encode once.
    const values = x.toFloat32Array();
    for (let i = 0; i < values.length; i++) values[i] = Math.max(values[i]!, 0); // ReLU
    const y = Tensor.fromArray(values, x.shape, "bf16");
    console.log(y.toFloat64Array().every((v) => v >= 0)); // true
    // README example end
    expect(printed).toEqual([
      "Tensor(f16 [2, 3])",
      0.333251953125,
      [3, 1],
      Number.POSITIVE_INFINITY,
      "4500",
      [0, 69],
      [2, 6],
      [2, 4, -128, 0],
      1.015625,
      true,
      true,
      true,
    ]);
  });

  it("is the code of the README", () => {
    const { readme, test } = readmeExample(new URL("../README.md", import.meta.url), import.meta.url);
    expect(test).toBe(readme);
  });
});
