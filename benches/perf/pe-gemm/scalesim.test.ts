import { describe, expect, it } from "vitest";
import { compareWithScaleSim, loadScaleSimRows } from "./scalesim.js";

// `pnpm bench:pe-gemm` prints this comparison; here every row must match exactly.
describe("pe_gemm_v2 against SCALE-Sim v2 (66 reference rows)", () => {
  const rows = compareWithScaleSim();

  it("covers 11 shapes x 2 arrays x 3 dataflows", () => {
    expect(loadScaleSimRows()).toHaveLength(66);
    expect(new Set(rows.map((row) => `${row.array} ${row.dataflow}`)).size).toBe(6);
  });

  it.each(rows.map((row) => [`${row.array} ${row.dataflow} ${row.m}x${row.n}x${row.k}`, row] as const))(
    "%s: cycles, folds and cycles per fold equal SCALE-Sim's",
    (_, row) => {
      expect(row.v2Cycles).toBe(row.scalesimCycles);
      expect(row.folds).toEqual(row.scalesimFolds);
      expect(row.perFoldCycles).toBe(row.scalesimPerFoldCycles);
    },
  );

  it("the issue's examples: v1 1.48x optimistic on 128^3 / 32x32, 7x on 32^3 / 128x128", () => {
    const find = (array: string, dataflow: string, size: number) =>
      rows.find(
        (row) =>
          row.array === array &&
          row.dataflow === dataflow &&
          row.m === size &&
          row.n === size &&
          row.k === size,
      );
    expect(find("32x32", "os", 128)).toMatchObject({ scalesimCycles: 3040, v2Cycles: 3040, v1Cycles: 2056 });
    expect(find("128x128", "os", 32)).toMatchObject({ scalesimCycles: 286, v2Cycles: 286, v1Cycles: 40 });
  });

  it("overlapping folds is never slower than back to back, and equal for one fold", () => {
    for (const row of rows) {
      expect(row.v2OverlapCycles).toBeLessThanOrEqual(row.v2Cycles);
      if (row.folds[0] * row.folds[1] === 1) expect(row.v2OverlapCycles).toBe(row.v2Cycles);
    }
  });
});
