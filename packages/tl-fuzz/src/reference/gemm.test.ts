import { describe, expect, it } from "vitest";
import { compositeGemm, dot } from "./gemm.js";
import { transpose } from "./layout.js";
import { tensor } from "./tensor.js";

const values = (t: { data: Float64Array }) => [...t.data];

describe("dot", () => {
  const a = tensor([1, 2, 3, 4, 5, 6], [2, 3], "f16");
  const b = tensor([7, 8, 9, 10, 11, 12], [3, 2], "f16");

  it("a 2x3 @ 3x2 gives an f32 [2, 2] for float inputs", () => {
    const c = dot(a, b);
    expect(c.shape).toEqual([2, 2]);
    expect(c.dtype).toBe("f32");
    // [1·7 + 2·9 + 3·11, 1·8 + 2·10 + 3·12; 4·7 + 5·9 + 6·11, 4·8 + 5·10 + 6·12]
    expect(values(c)).toEqual([58, 64, 139, 154]);
  });

  it("adds the accumulator, of the result dtype", () => {
    const acc = tensor([1, 1, 1, 1], [2, 2], "f32");
    expect(values(dot(a, b, { acc }))).toEqual([59, 65, 140, 155]);
    expect(() => dot(a, b, { acc, outDtype: "f16" })).toThrow(/accumulator is f32/);
    expect(() => dot(a, b, { acc: tensor([0, 0], [1, 2], "f32") })).toThrow(/does not match/);
  });

  it("rounds once to outDtype from the f32 accumulator", () => {
    const row = tensor([2048, 1], [1, 2], "f16");
    const ones = tensor([1, 1], [2, 1], "f16");
    expect(values(dot(row, ones))).toEqual([2049]);
    const half = dot(row, ones, { outDtype: "f16" });
    expect(half.dtype).toBe("f16");
    expect(values(half)).toEqual([2048]);
  });

  it("reads a transposed operand as the transpose of the stored matrix", () => {
    // W stored [N, K] = [2, 3]; a @ W^T = a @ b.
    const w = tensor([7, 9, 11, 8, 10, 12], [2, 3], "f16");
    expect(values(dot(a, transpose(w)))).toEqual([58, 64, 139, 154]);
    // A stored transposed [K, M].
    const at = tensor([1, 4, 2, 5, 3, 6], [3, 2], "f16");
    expect(values(dot(transpose(at), b))).toEqual([58, 64, 139, 154]);
  });

  it("integer inputs accumulate in i32 modulo 2^32 and convert with saturation", () => {
    const x = tensor([100, 100], [1, 2], "i8");
    const y = tensor([100, 100], [2, 1], "i8");
    const wide = dot(x, y);
    expect(wide.dtype).toBe("i32");
    expect(values(wide)).toEqual([20000]);
    expect(values(dot(x, y, { outDtype: "i8" }))).toEqual([127]);
    const small = dot(tensor([1, 2], [1, 2], "i8"), tensor([3, 4], [2, 1], "i8"), {
      acc: tensor([5], [1, 1], "i32"),
    });
    expect(values(small)).toEqual([16]);
    const wrapped = dot(tensor([2147483647, 1], [1, 2], "i32"), tensor([1, 1], [2, 1], "i32"));
    expect(values(wrapped)).toEqual([-2147483648]);
  });

  it("refuses mismatched operands", () => {
    expect(() => dot(a, a)).toThrow(/\(M, K\) x \(K, N\)/);
    expect(() => dot(a, tensor([1, 2, 3], [3, 1], "f32"))).toThrow(/dtypes differ/);
  });
});

describe("composite GEMM", () => {
  // A = [[1, 1]], B = [[-3], [5]], one K element per K tile.
  const a = tensor([1, 1], [1, 2], "f32");
  const b = tensor([-3, 5], [2, 1], "f32");

  it("a k_tile relu runs after every K tile, an output_tile relu once at the end", () => {
    const kTile = compositeGemm(a, b, { tile: [1, 1, 1], epilogue: [{ op: "relu", scope: "k_tile" }] });
    expect(values(kTile)).toEqual([5]); // relu(relu(-3) + 5)
    const output = compositeGemm(a, b, { tile: [1, 1, 1], epilogue: [{ op: "relu", scope: "output_tile" }] });
    expect(values(output)).toEqual([2]); // relu(-3 + 5)
    expect(values(compositeGemm(a, b, { tile: [1, 1, 1], epilogue: [{ op: "relu" }] }))).toEqual([2]);
    // One K tile of 2: the k_tile step sees the whole sum.
    const wide = compositeGemm(a, b, { tile: [1, 1, 2], epilogue: [{ op: "relu", scope: "k_tile" }] });
    expect(values(wide)).toEqual([2]);
  });

  it("on the last K tile the k_tile steps run before the output_tile steps", () => {
    const out = compositeGemm(a, b, {
      tile: [1, 1, 1],
      epilogue: [
        { op: "mul", scalar: 2, scope: "output_tile" },
        { op: "add", scalar: 1, scope: "k_tile" },
      ],
    });
    // K tile 0: -3 + 1 = -2; K tile 1: -2 + 5 + 1 = 4; output: 4 · 2 = 8.
    expect(values(out)).toEqual([8]);
  });

  it("holds the running sum in accDtype between K tiles", () => {
    const x = tensor([2048, 1, 1], [1, 3], "f16");
    const ones = tensor([1, 1, 1], [3, 1], "f16");
    const f32 = compositeGemm(x, ones, { tile: [1, 1, 1] });
    expect(f32.dtype).toBe("f16"); // the default output dtype is the inputs'
    expect(values(f32)).toEqual([2050]);
    // An f16 accumulator rounds 2049 to 2048 after each K tile.
    expect(values(compositeGemm(x, ones, { tile: [1, 1, 1], accDtype: "f16" }))).toEqual([2048]);
    expect(values(compositeGemm(x, ones, { tile: [1, 1, 1], outDtype: "f32" }))).toEqual([2050]);
  });

  it("computes a @ W^T for a weight stored [N, K]", () => {
    const x = tensor([1, 2, 3, 4, 5, 6], [2, 3], "bf16");
    const w = tensor([7, 9, 11, 8, 10, 12], [2, 3], "bf16");
    const y = compositeGemm(x, transpose(w), { tile: [1, 1, 2], outDtype: "f32" });
    expect(values(y)).toEqual([58, 64, 139, 154]);
  });

  it("integer inputs: i32 accumulator, output in the input dtype with saturation", () => {
    const x = tensor([100, 100], [1, 2], "i8");
    const y = tensor([100, 100], [2, 1], "i8");
    expect(values(compositeGemm(x, y, { tile: [1, 1, 1] }))).toEqual([127]);
    expect(values(compositeGemm(x, y, { tile: [1, 1, 1], outDtype: "i32" }))).toEqual([20000]);
  });

  it("refuses epilogue steps that are not elementwise or lack their scalar", () => {
    expect(() => compositeGemm(a, b, { tile: [1, 1, 1], epilogue: [{ op: "where" }] })).toThrow(
      /not an epilogue/,
    );
    expect(() => compositeGemm(a, b, { tile: [1, 1, 1], epilogue: [{ op: "add" }] })).toThrow(/scalar/);
    expect(() => compositeGemm(a, b, { tile: [1, 0, 1] })).toThrow(/positive integers/);
  });
});
