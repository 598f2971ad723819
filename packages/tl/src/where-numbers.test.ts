import { describe, expect, it } from "vitest";
import type { TLContext } from "./context.js";
import { failure, listCommands, machineOf, runKernel } from "./test-support.js";

// Triton's `tl.where(mask, x, 0.0)`: a number for either value, taken in the other value's dtype.
describe("tl.where with a number for a value (Triton's tl.where(mask, x, 0.0))", () => {
  it("selects the number where the condition says, in the tensor's dtype; phase 1 computes it from constants", async () => {
    const seen: Record<string, number[]> = {};
    await runKernel(machineOf(), async (tl: TLContext) => {
      const x = tl.arange(0, 8);
      const mask = await tl.lt(x, 5);
      seen.elseNumber = [...(await tl.where(mask, x, -1)).data.toFloat64Array()];
      seen.thenNumber = [...(await tl.where(mask, 7, x)).data.toFloat64Array()];
      const half = tl.full([2, 8], 0.5, "f16");
      const neg = await tl.where(mask, half, Number.NEGATIVE_INFINITY); // [2, 8]: the number broadcasts
      seen.f16 = [...neg.data.toFloat64Array()].slice(0, 8);
      seen.shape = neg.shape as number[];
      seen.rounded = [...(await tl.where(mask, half, 0.1)).data.toFloat64Array()].slice(4, 6);
    });
    expect(seen.elseNumber).toEqual([0, 1, 2, 3, 4, -1, -1, -1]);
    expect(seen.thenNumber).toEqual([7, 7, 7, 7, 7, 5, 6, 7]);
    expect(seen.f16).toEqual([0.5, 0.5, 0.5, 0.5, 0.5, -Infinity, -Infinity, -Infinity]);
    expect(seen.shape).toEqual([2, 8]);
    // 0.1 rounded to f16 (0.0999755859375), as Triton casts a Python float to the tensor's dtype.
    expect(seen.rounded).toEqual([0.5, 0.0999755859375]);
  });

  it("issues the where of a tensor: one fill of a [1] constant holding the number, then the select", async () => {
    const commands = await listCommands(async (tl: TLContext) => {
      const x = tl.arange(0, 8);
      await tl.where(await tl.lt(x, 5), x, 0);
    });
    const ops = commands.map((command) => (command.kind === "math" ? command.op : command.kind));
    expect(ops).toEqual(["iota", "lt", "fill", "where"]);
    const where = commands.at(-1);
    expect(where?.kind === "math" && [where.shape, where.inputShapes]).toEqual([[8], [[8], [8], [1]]]);
  });

  it("refuses two numbers (no tensor gives the dtype), naming the call's line", async () => {
    const error = await failure(
      runKernel(machineOf(), async (tl: TLContext) => {
        const mask = await tl.lt(tl.arange(0, 8), 5);
        await tl.where(mask, 1, 0);
      }),
    );
    expect(error.code).toBe("TL_INVALID_CALL");
    expect(error.message).toContain("tl.where: a and b are both numbers");
    expect(error.message).toMatch(/where-numbers\.test\.ts:\d+:\d+/);
  });
});
