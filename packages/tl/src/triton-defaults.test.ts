import { describe, expect, it } from "vitest";
import type { TLContext } from "./context.js";
import { failure, machineOf, runKernel, TestMemory } from "./test-support.js";

// Triton's defaults where tl used to differ: tl.softmax and tl.cumsum without an axis work along
// axis 0 (Triton: `softmax(x, dim=None)` takes dim 0, `cumsum(input, axis=0)`), and
// tl.trans(x, ...dims) with a full order of dims is Triton's permutation. Expectations by hand.
const run = (kernel: (tl: TLContext) => Promise<void>) =>
  runKernel(machineOf(), kernel, [], { memory: new TestMemory() });

describe("Triton's default axes", () => {
  it("cumsum, cumprod and softmax default to axis 0", async () => {
    let cumsum: number[] = [];
    let cumprod: number[] = [];
    let softmax: number[] = [];
    await run(async (tl) => {
      // x = [[0, 1, 2], [3, 4, 5]] (f32, known in phase 1).
      const x = tl.reshape(await tl.arange(0, 6, "i32").to("f32"), [2, 3]);
      cumsum = [...(await tl.cumsum(x)).data.toFloat64Array()];
      cumprod = [...(await tl.cumprod(await tl.add(x, 1))).data.toFloat64Array()];
      softmax = [...(await tl.softmax(await tl.mul(x, 0))).data.toFloat64Array()];
    });
    // Down the columns: [[0, 1, 2], [0 + 3, 1 + 4, 2 + 5]] (along the rows it would be 0 1 3 3 7 12).
    expect(cumsum).toEqual([0, 1, 2, 3, 5, 7]);
    // x + 1 = [[1, 2, 3], [4, 5, 6]]: down the columns [[1, 2, 3], [4, 10, 18]].
    expect(cumprod).toEqual([1, 2, 3, 4, 10, 18]);
    // softmax of zeros along axis 0 (2 elements a line): 1/2 each (along the rows: 1/3).
    expect(softmax).toEqual([0.5, 0.5, 0.5, 0.5, 0.5, 0.5]);
  });
});

describe("tl.trans(x, ...dims): Triton's permutation", () => {
  it("takes a full order of dims: (1, 0) transposes, (0, 1) keeps, 3-D orders move only last two or size-1 dims", async () => {
    const seen: Record<string, unknown> = {};
    await run(async (tl) => {
      const x = tl.reshape(await tl.arange(0, 6, "i32").to("f32"), [2, 3]);
      const t = tl.trans(x, 1, 0);
      seen.t = [t.shape, t.transposed];
      const same = tl.trans(x, 0, 1); // Triton: the identity permutation
      seen.same = [same.shape, same.transposed];
      const y = tl.reshape(x, [1, 2, 3]);
      const lastTwo = tl.trans(y, 0, 2, 1);
      seen.lastTwo = [lastTwo.shape, lastTwo.transposed];
      // [1, 2, 3] ordered (1, 0, 2): the size-1 dim moves, no byte does.
      seen.size1 = [tl.trans(y, 1, 0, 2).shape];
    });
    expect(seen.t).toEqual([[3, 2], true]);
    expect(seen.same).toEqual([[2, 3], false]);
    expect(seen.lastTwo).toEqual([[1, 3, 2], true]);
    expect(seen.size1).toEqual([[2, 1, 3]]);
  });

  it("a full order that moves bytes names tl.permute", async () => {
    const error = await failure(
      run(async (tl) => {
        const x = tl.reshape(await tl.arange(0, 24, "i32").to("f32"), [2, 3, 4]);
        tl.trans(x, 2, 1, 0);
      }),
    );
    expect(error.code).toBe("TL_INVALID_CALL");
    expect(error.detail).toContain("await tl.permute(x, [2, 1, 0])");
  });
});
