import type { MathCommand } from "@kb/spec";
import { describe, expect, it } from "vitest";
import type { TLContext } from "./context.js";
import type { TensorHandle } from "./handles.js";
import { failure, hbmAt, listCommands } from "./test-support.js";

// Triton's reductions without an axis (axis=None) reduce every axis: tl.sum(x) of a [4, 8] tile
// is the sum of its 32 elements (one PE_MATH op over the flattened tile), shape [1, 1] (the
// reduced axes kept as 1); an axis given reduces that axis alone, as before.

/** x = [[0 .. 7], [8 .. 15], [16 .. 23], [24 .. 31]] as f32 (a constant: phase 1 knows its values). */
async function tile(tl: TLContext): Promise<TensorHandle> {
  return tl.cast(tl.reshape(tl.arange(0, 32), [4, 8]), "f32");
}

function values(handle: TensorHandle): number[] {
  return [...handle.data.toFloat64Array()];
}

describe("reductions with the axis omitted reduce every axis (Triton's axis=None)", () => {
  it("sum, max, min, argmax, argmin of a [4, 8] tile: one value each, shape [1, 1]", async () => {
    const seen: Record<string, { shape: readonly number[]; values: number[] }> = {};
    const commands = await listCommands(async (tl) => {
      const x = await tile(tl);
      const neg = await tl.sub(20, x); // 20 - x: the max is 20 at index 0, the min -11 at index 31
      for (const [name, result] of [
        ["sum", await tl.sum(x)],
        ["max", await tl.max(x)],
        ["min", await tl.min(neg)],
        ["argmax", await tl.argmax(neg)],
        ["argmin", await tl.argmin(neg)],
      ] as const) {
        seen[name] = { shape: result.shape, values: values(result) };
      }
    });
    expect(seen).toEqual({
      sum: { shape: [1, 1], values: [496] }, // 0 + 1 + ... + 31
      max: { shape: [1, 1], values: [31] },
      min: { shape: [1, 1], values: [-11] },
      argmax: { shape: [1, 1], values: [0] },
      argmin: { shape: [1, 1], values: [31] }, // the flat index, as Triton's
    });
    // Each is one PE_MATH op over the 32 elements, flattened.
    const reductions = commands.filter(
      (c): c is MathCommand => c.kind === "math" && ["sum", "max", "min", "argmax", "argmin"].includes(c.op),
    );
    expect(reductions.map((c) => [c.op, c.shape])).toEqual([
      ["sum", [32]],
      ["max", [32]],
      ["min", [32]],
      ["argmax", [32]],
      ["argmin", [32]],
    ]);
  });

  it("an axis given reduces that axis only; { out } without an axis is the third argument", async () => {
    const seen: number[][] = [];
    await listCommands(async (tl) => {
      const x = await tile(tl);
      seen.push(values(await tl.sum(x, 1)), values(await tl.sum(x, 0)), values(await tl.max(x, -1)));
      const out = tl.empty([1, 1], "f32");
      const into = await tl.sum(x, { out });
      seen.push([into.address === out.address ? 1 : 0], values(into));
    });
    expect(seen).toEqual([[28, 92, 156, 220], [48, 52, 56, 60, 64, 68, 72, 76], [7, 15, 23, 31], [1], [496]]);
  });

  it("a 1-D tile is reduced as before; a non-contiguous view without an axis is refused, naming the fix", async () => {
    const seen: number[][] = [];
    await listCommands(async (tl) => {
      seen.push(values(await tl.sum(await tl.cast(tl.arange(0, 4), "f32"))));
    });
    expect(seen).toEqual([[6]]);
    const error = await failure(
      listCommands(async (tl) => {
        const x = await tile(tl);
        await tl.sum(tl.trans(x));
      }),
    );
    expect(error.code).toBe("TL_INVALID_CALL");
    expect(error.message).toMatch(/tl\.sum without an axis reduces every axis/);
    expect(error.message).toMatch(/pass the axis/);
  });

  it("a tile loaded with a stride is contiguous in TCM (README): reduced without an axis as one op", async () => {
    // Columns 0..1 of a [3, 8] f32 matrix: strided in HBM, a contiguous [3, 2] tile in TCM.
    const commands = await listCommands(async (tl) => {
      const x = await tl.load(hbmAt(0), [3, 2], "f32", { stride: 8 });
      expect((await tl.sum(x)).shape).toEqual([1, 1]);
    });
    const sums = commands.filter((c): c is MathCommand => c.kind === "math" && c.op === "sum");
    expect(sums.map((c) => c.shape)).toEqual([[6]]);
  });
});
