import { isKbError } from "@kb/errors";
import { encodeAddress, tcmAddress } from "@kb/topology";
import { describe, expect, it } from "vitest";
import { commandList } from "./command-list.js";
import type { TLContext } from "./context.js";
import { failure, placementOf } from "./test-support.js";

const hbm = (offset: number) => encodeAddress({ sip: 0, cube: 0, space: "hbm", offset });
/** Scratch of the test kernels: PE0's TCM from 1 MiB. */
const scratch = (offset: number) => tcmAddress(0, 0, 0, 2 ** 20 + offset);
const list = (kernel: (tl: TLContext) => Promise<void>) =>
  commandList(kernel, [], {
    kernel: "k",
    placement: placementOf(),
    scratch: { offset: 2 ** 20, bytes: 2 ** 20 },
  });

/** The message of the KbError a synchronous `call` throws. */
function message(call: () => unknown): string {
  try {
    call();
  } catch (error) {
    if (isKbError(error)) return error.message;
    throw error;
  }
  throw new Error("expected a KbError");
}

describe("broadcasting and scalars on either side", () => {
  it("an add of a column and a row is one command over the output shape, with both input shapes", async () => {
    let shape: readonly number[] = [];
    const commands = await list(async (tl) => {
      const column = await tl.load(hbm(0), [4, 1], "f32"); // 16 B at scratch 0
      const row = await tl.load(hbm(64), [8], "f32"); // 32 B at scratch 16
      shape = (await tl.add(column, row)).shape;
    });
    expect(shape).toEqual([4, 8]);
    expect(commands.at(-1)).toEqual({
      kind: "math",
      op: "add",
      inputs: [scratch(0), scratch(16)],
      shape: [4, 8],
      inputShapes: [[4, 1], [8]],
      out: scratch(48),
      dtype: "f32",
    });
  });

  it("shapes that do not broadcast name both", async () => {
    const error = await failure(
      list(async (tl) => {
        await tl.mul(await tl.load(hbm(0), [4, 3], "f32"), await tl.load(hbm(64), [4], "f32"));
      }),
    );
    expect(error.message).toContain("tl.mul: operand shapes [4, 3] and [4] do not broadcast (numpy's rules");
  });

  it("a scalar first: tl.div(1, x) and tl.sub(0, x) say which operand it is", async () => {
    const commands = await list(async (tl) => {
      const x = await tl.load(hbm(0), [4], "f32");
      await tl.div(1, x);
      await tl.sub(x, 0); // the last operand: no scalarIndex, as before
      expect(message(() => tl.add(1, 2 as never))).toContain("tl.add: one operand may be a number, not both");
    });
    expect(
      commands.slice(1).map((c) => (c.kind === "math" ? [c.op, c.scalars, c.scalarIndex] : c.kind)),
    ).toEqual([
      ["div", [1], 0],
      ["sub", [0], undefined],
    ]);
  });
});

describe("comparisons, logic and where with an i1 mask", () => {
  it("lt makes an i1 mask from f16 values; where takes it with f16 values", async () => {
    const commands = await list(async (tl) => {
      const x = await tl.load(hbm(0), [8], "f16"); // 16 B at 0
      const mask = await tl.lt(x, 0.5); // i1, 8 B at 16
      expect(mask.dtype).toBe("i1");
      await tl.where(mask, x, await tl.load(hbm(64), [1], "f16")); // y at 32, out at 48
    });
    expect(commands[1]).toMatchObject({ op: "lt", dtype: "i1", inputDtype: "f16", scalars: [0.5] });
    expect(commands[3]).toEqual({
      kind: "math",
      op: "where",
      inputs: [scratch(16), scratch(0), scratch(32)],
      shape: [8],
      inputShapes: [[8], [8], [1]],
      out: scratch(48),
      dtype: "f16",
      inputDtypes: ["i1", "f16", "f16"],
    });
  });

  it("logic ops refuse floats; tl.dot refuses i1", async () => {
    const and = await failure(
      list(async (tl) => {
        const x = await tl.load(hbm(0), [4, 4], "f32");
        await tl.and(x, x);
      }),
    );
    expect(and.message).toContain("tl.and: takes i1, i8, i32, u32, u8, u16, i16, i64, u64 operands, got f32");
    const dot = await failure(
      list(async (tl) => {
        const mask = await tl.load(hbm(64), [4, 4], "i1");
        await tl.dot(mask, mask);
      }),
    );
    expect(dot.message).toContain("tl.dot: PE_GEMM has no i1 operands (booleans)");
  });
});

describe("shape calls", () => {
  it("reshape, expandDims, splat and trans of size-1 axes issue no command", async () => {
    const commands = await list(async (tl) => {
      const x = await tl.load(hbm(0), [2, 6], "f32");
      expect(tl.reshape(x, [3, -1]).shape).toEqual([3, 4]);
      expect(tl.expandDims(x, 0).shape).toEqual([1, 2, 6]);
      expect(tl.expandDims(x, -1).shape).toEqual([2, 6, 1]);
      expect(tl.trans(tl.expandDims(x, 0), 0, 1).shape).toEqual([2, 1, 6]); // a size-1 axis: same bytes
      expect(tl.trans(x).shape).toEqual([6, 2]); // the last two: a transposed view, as before
      expect([...tl.splat(3, [2], "i32").data.toFloat64Array()]).toEqual([3, 3]);
      expect(message(() => tl.reshape(x, [5, -1]))).toContain("shape [5,-1] does not hold them");
      expect(message(() => tl.trans(tl.reshape(x, [2, 3, 2]), 0, 2))).toContain(
        "use await tl.swapAxes(x, 0, 2) (a PE_MATH copy)",
      );
      // Triton's tl.trans without dims transposes 2-D only: a 3-D tensor needs its permutation.
      expect(message(() => tl.trans(tl.reshape(x, [2, 3, 2])))).toMatch(
        /shape-calls\.test\.ts:\d+:\d+ .*tl\.trans\(handle #\d+ \(f32 \[2, 3, 2\] in tcm\)\): without dims tl\.trans transposes a 2-D tensor only \(Triton's rule\); pass the permutation of the 3 dims, e\.g\. tl\.trans\(x, 2, 1, 0\)/,
      );
    });
    expect(commands.map((c) => c.kind)).toEqual(["dma"]);
  });

  it("broadcastTo names the shapes that do not broadcast", async () => {
    const error = await failure(
      list(async (tl) => {
        await tl.broadcastTo(await tl.load(hbm(0), [4], "f32"), [4, 3]);
      }),
    );
    expect(error.message).toContain(
      "tl.broadcastTo: handle #0 (f32 [4] in tcm) does not broadcast to [4, 3]",
    );
  });

  it("swapAxes and broadcastTo copy on PE_MATH when bytes move, and not otherwise", async () => {
    const commands = await list(async (tl) => {
      const x = await tl.load(hbm(0), [2, 3, 4], "f32"); // 96 B at 0
      expect((await tl.swapAxes(x, 0, 2)).shape).toEqual([4, 3, 2]); // out at 96
      const row = await tl.load(hbm(256), [4], "f32"); // 16 B at 192
      expect((await tl.broadcastTo(row, [1, 4])).shape).toEqual([1, 4]); // a reshape
      expect((await tl.broadcastTo(row, [3, 4])).shape).toEqual([3, 4]); // out at 208
    });
    expect(commands.filter((c) => c.kind === "math")).toEqual([
      {
        kind: "math",
        op: "transpose",
        inputs: [scratch(0)],
        shape: [2, 3, 4],
        out: scratch(96),
        dtype: "f32",
        axis: 0,
        scalars: [2],
      },
      {
        kind: "math",
        op: "copy",
        inputs: [scratch(192)],
        shape: [3, 4],
        inputShapes: [[4]],
        out: scratch(208),
        dtype: "f32",
      },
    ]);
  });
});

describe("known values in phase 1", () => {
  it("offsets and a mask built from tl.arange and the program id have data, in command-list mode too", async () => {
    let values: number[][] = [];
    const commands = await list(async (tl) => {
      const offs = await tl.add(tl.arange(0, 4), 2 * 4); // program 2 of blocks of 4
      const mask = await tl.lt(offs, 10);
      const flipped = await tl.not(tl.reshape(mask, [2, 2]));
      values = [offs, mask, flipped].map((h) => [...h.data.toFloat64Array()]);
      expect(offs.pending).toBe(false);
    });
    expect(values).toEqual([
      [8, 9, 10, 11],
      [1, 1, 0, 0],
      [0, 0, 1, 1],
    ]);
    // Each still costs its PE_MATH command: the iota of the arange, add, lt, not.
    expect(commands.map((c) => (c.kind === "math" ? c.op : c.kind))).toEqual(["iota", "add", "lt", "not"]);
  });

  it("a result of loaded data stays pending", async () => {
    await list(async (tl) => {
      const x = await tl.load(hbm(0), [4], "f32");
      expect((await tl.add(x, tl.zeros([4], "f32"))).pending).toBe(true);
    });
  });
});
