import { describe, expect, it } from "vitest";
import { sweepPointText } from "./sweep-point.js";

describe("a sweep point's run page", () => {
  it("says which point it is and the axis values it ran with, lists as JSON", () => {
    expect(
      sweepPointText({
        table: "out/results.jsonl",
        point: 3,
        values: { hbm: "hbm3", pes: [4, 4], tile: [64, 64, 64], scale: 0.5 },
      }),
    ).toBe("point 3 of out/results.jsonl: hbm = hbm3, pes = [4,4], tile = [64,64,64], scale = 0.5");
    expect(sweepPointText({ table: "r.jsonl", point: 0, values: {} })).toBe("point 0 of r.jsonl");
  });
});
