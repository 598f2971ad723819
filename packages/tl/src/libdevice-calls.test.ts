import { describe, expect, it } from "vitest";
import type { TLContext } from "./context.js";
import { hbmAt, listCommands, timeOf } from "./test-support.js";

// Triton's libdevice subset as tl calls (made from the op table's entries): values phase 1 knows
// from constants, and the PE_MATH timing of docs/latency-model.md (schema defaults: 64 lanes at
// 1 GHz, overhead 4 cycles, the PE_CPU's dispatch 2 ns).

describe("libdevice calls", () => {
  it("asin, atan2 with a number, hypot and erfinv of f32 constants", async () => {
    const seen: number[][] = [];
    await listCommands(async (tl) => {
      const half = tl.full([2], 0.5, "f32");
      for (const h of [
        await tl.asin(half),
        await tl.atan2(1, tl.full([1], -1, "f32")),
        await tl.hypot(tl.full([1], 3, "f32"), 4),
        await tl.erfinv(tl.full([1], 0, "f32")),
        await tl.cbrt(tl.full([1], -27, "f32")),
      ])
        seen.push([...h.data.toFloat64Array()]);
    });
    const f32 = Math.fround;
    expect(seen).toEqual([[f32(Math.PI / 6), f32(Math.PI / 6)], [f32((3 * Math.PI) / 4)], [5], [0], [-3]]);
  });

  it("asin of 4096 f32: 64 vectors x 6 cycles + 4 = 388 ns, + 2 ns dispatch, + 33 + 33 fetch and store; erfinv 64 x 10 + 4 + 2 + 66", async () => {
    const load = (tl: TLContext) => tl.load(hbmAt(0), [4096], "f32");
    const base = await timeOf(async (tl: TLContext) => void (await load(tl)));
    const asin = await timeOf(async (tl: TLContext) => void (await tl.asin(await load(tl))));
    const erfinv = await timeOf(async (tl: TLContext) => void (await tl.erfinv(await load(tl))));
    // The operand's 16384 B are fetched from PE_TCM and the result stored there: 1 + 16384 / 512 each.
    const tcm = 2 * (1 + 16384 / 512);
    expect(asin - base).toBeCloseTo(64 * 6 + 4 + 2 + tcm, 9);
    expect(erfinv - base).toBeCloseTo(64 * 10 + 4 + 2 + tcm, 9);
  });
});
