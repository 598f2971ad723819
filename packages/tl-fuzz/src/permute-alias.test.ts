import { describe, expect, it } from "vitest";
import { buildProgram } from "./build.js";
import { check } from "./check.js";
import { ROUND2_KINDS } from "./round2-steps.js";

// A permute of a 2-column value ([rows, 1, 2] to [rows, 2, 1]) moves no byte: tl returns a view
// of the same bytes, so an in-place write into the source changes it too (README: views share
// bytes). The generator must treat it as an alias: after `tl.add(v0, ..., { out: v0 })` neither
// may be read (the seed-20261124 fuzz drew `permute(v0)`, then `add(v0, v1, { out: v0 })`, then a
// store of the permute, which the evaluator took as unchanged).
describe("a permute that moves no byte aliases its source", () => {
  it("an in-place write into the source makes the permute stale: it is not read afterwards", async () => {
    const p = buildProgram({
      seed: 3,
      rows: 1,
      blockRows: 1,
      pes: 1,
      persistent: false,
      special: false,
      steps: [
        { kind: 0, a: 0, b: 1, c: 0, d: 0 }, // v0: a load of 2 columns (COLS[1]) of f32
        { kind: ROUND2_KINDS.shape, a: 0, b: 3, c: 0, d: 0 }, // v1: permute(v0), a view
        { kind: 4, a: 0, b: 0, c: 0, d: 0 }, // v2: add(v0, v1, { out: v0 })
      ],
    });
    expect(p.steps.map((s) => s.kind)).toEqual(["load", "shape", "inplace", "store"]);
    // Only the in-place result is stored: the permute named the bytes it overwrote.
    expect(p.steps.at(-1)).toMatchObject({ kind: "store", x: 2 });
    expect((await check(p)).failure).toBeNull();
  });
});
