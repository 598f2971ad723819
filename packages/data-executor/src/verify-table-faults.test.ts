import { Tensor } from "@kb/tensor";
import { describe, expect, it } from "vitest";
import { verify } from "./verify.js";
import { formatVerifyTable } from "./verify-table.js";

// Issue 33 point 5: the verify table never reads "max abs err 0" beside a NaN.

/** The cells of the table's row for `name`, split on the column gaps. */
function rowOf(table: string, name: string): string[] {
  const line = table.split("\n").find((text) => text.startsWith(`${name} `)) as string;
  return line.trim().split(/ {2,}/);
}

describe("fault: the verify table reads max abs err 0 beside a NaN", () => {
  it("an output with a NaN and every other element exact shows NaN errors, not 0", () => {
    const output = Tensor.fromArray([Number.NaN, 1, 2, 3], [4], "f32");
    const table = formatVerifyTable(
      verify({ out: output }, { out: Tensor.fromArray([0, 1, 2, 3], [4], "f32") }),
    );
    // output, dtype, shape, non-finite, max abs err, max rel err, mismatches, ...
    expect(rowOf(table, "out").slice(3, 7)).toEqual(["1 NaN (first [0])", "NaN", "NaN", "1 of 4"]);
  });

  it("a NaN in the reference shows NaN errors too", () => {
    const table = formatVerifyTable(
      verify(
        { r: Tensor.fromArray([0, 1], [2], "f32") },
        { r: Tensor.fromArray([Number.NaN, 1], [2], "f32") },
      ),
    );
    expect(rowOf(table, "r").slice(3, 7)).toEqual(["0", "NaN", "NaN", "1 of 2"]);
  });

  it("an infinite error stays Inf beside a NaN; finite errors without a NaN print as numbers", () => {
    const inf = Number.POSITIVE_INFINITY;
    const table = formatVerifyTable(
      verify(
        {
          a: Tensor.fromArray([Number.NaN, inf, 2], [3], "f32"),
          b: Tensor.fromArray([0.5, 1, 2], [3], "f32"),
        },
        { a: Tensor.fromArray([0, 1, 2], [3], "f32"), b: Tensor.fromArray([0.25, 1, 2], [3], "f32") },
      ),
    );
    expect(rowOf(table, "a").slice(4, 6)).toEqual(["Inf", "Inf"]);
    expect(rowOf(table, "b").slice(3, 6)).toEqual(["0", "0.25", "1"]);
  });
});
