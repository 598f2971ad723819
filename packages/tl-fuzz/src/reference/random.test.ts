import { MATH_OPS } from "@kb/oplog";
import { describe, expect, it } from "vitest";
import { philox, random } from "./random.js";
import { arange } from "./tensor.js";

describe("the evaluator's tl.rand / tl.randn (README's Random numbers)", () => {
  it("gives Random123's known answer for philox4x32_10 at seed 0, offset 0", () => {
    expect(philox(0, 0).map((w) => w.toString(16).padStart(8, "0"))).toEqual([
      "6627e8d5",
      "e169c58d",
      "bc57ac4c",
      "9b00dbd8",
    ]);
  });

  it("agrees with the op table's rand and randn (phase 2's evaluation) on every offset of a block", () => {
    const offsets = arange(-8, 1016, "i32");
    for (const op of ["rand", "randn"] as const) {
      const info = MATH_OPS[op];
      if (info?.shape !== "elementwise") throw new Error(`${op} is elementwise`);
      const ours = random(op, 2026, offsets);
      const theirs = [...offsets.data].map((offset, i) => info.element(2026, offset, 0, i));
      expect([...ours.data], op).toEqual(theirs);
    }
  });
});
