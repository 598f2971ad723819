import { Tensor } from "@kb/tensor";
import { describe, expect, it } from "vitest";
import type { TLContext } from "./context.js";
import { failure, hbmAt, machineOf, runKernel, scratchAt, TestMemory } from "./test-support.js";

// A strided load's TCM copy is contiguous (packages/tl/README.md, "load ... { stride }"), so it
// reshapes like any plain tile (issue 33, point 5). Only the source in HBM is strided: a
// composite, which streams its operand from there, still refuses it.

/** HBM from offset 0: the f32 matrix [4, 8] with element (r, c) = 10 r + c. */
function matrixMemory(): TestMemory {
  const memory = new TestMemory();
  const values = Array.from({ length: 32 }, (_, i) => 10 * Math.floor(i / 8) + (i % 8));
  memory.write(hbmAt(0), Tensor.fromArray(values, [4, 8], "f32").bytes);
  return memory;
}

/** Columns 3 and 4 of the matrix: [4, 2] loaded with stride 8. */
function columns(tl: TLContext) {
  return tl.load(hbmAt(3 * 4), [4, 2], "f32", { stride: 8 });
}

describe("fault: reshape and expandDims of a tile loaded with { stride }", () => {
  it("reshape gives the tile's elements in row-major order, read from its contiguous TCM copy", async () => {
    let flat: number[] = [];
    let expanded: readonly number[] = [];
    const { commands } = await runKernel(
      machineOf(),
      async (tl) => {
        const x = await columns(tl); // TCM scratch 0, 32 B
        flat = [...tl.reshape(x, [8]).data.toFloat64Array()];
        const e = tl.expandDims(x, 0);
        expanded = e.shape;
        await tl.exp(tl.reshape(x, [-1]));
      },
      [],
      { memory: matrixMemory() },
    );
    expect(flat).toEqual([3, 4, 13, 14, 23, 24, 33, 34]);
    expect(expanded).toEqual([1, 4, 2]);
    // The exp reads the 8 elements at the tile's TCM address, as one contiguous [8].
    expect(commands.at(-1)).toMatchObject({ kind: "math", op: "exp", inputs: [scratchAt(0)], shape: [8] });
  });

  it("a reshaped strided tile is still not streamed by a composite as if contiguous", async () => {
    const error = await failure(
      runKernel(machineOf(), async (tl) => {
        const x = tl.reshape(await columns(tl), [2, 4]);
        await tl.composite("math", x, null, { outPtr: hbmAt(4096), mathOp: "exp" });
      }),
    );
    expect(error.message).toContain("was loaded with stride 8");
  });
});
