import { describe, expect, it } from "vitest";
import { listCommands as list } from "./test-support.js";

// tl.cast to the fp8 and fp4 dtypes rounds to nearest even and saturates (Triton's
// cvt.rn.satfinite); phase 1 computes the value of a cast of constants (the same rounding as
// phase 2), so it can be read back here.
describe("casts to fp8 and fp4", () => {
  it("round to nearest even and saturate: 100000 -> 448 (f8e4m3), 57344 (f8e5m2), 6 (f4e2m1)", async () => {
    const seen: Record<string, number[]> = {};
    const commands = await list(async (tl) => {
      const x = tl.full([1, 4], 100000, "f32");
      const y = await tl.add(x, tl.full([1, 4], 0, "f32"));
      for (const dtype of ["f8e4m3", "f8e5m2", "f4e2m1"] as const) {
        seen[dtype] = Array.from((await tl.cast(y, dtype)).data.toFloat64Array());
      }
      const ties = await tl.cast(await tl.add(await tl.cast(tl.arange(0, 4), "f32"), 0.5), "f4e2m1"); // 0.5 1.5 2.5 3.5
      seen.ties = Array.from(ties.data.toFloat64Array());
    });
    expect(seen).toEqual({
      f8e4m3: [448, 448, 448, 448],
      f8e5m2: [57344, 57344, 57344, 57344],
      f4e2m1: [6, 6, 6, 6],
      ties: [0.5, 1.5, 2, 4], // 2.5 -> 2 (even), 3.5 -> 4 (even: 3 is 0x5, 4 is 0x6)
    });
    expect(
      commands.filter((c) => c.kind === "math" && c.op === "cast").map((c) => c.kind === "math" && c.dtype),
    ).toEqual(["f8e4m3", "f8e5m2", "f4e2m1", "f32", "f4e2m1"]);
  });
});
