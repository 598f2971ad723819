import type { RunResults } from "@kb/runtime";
import { describe, expect, it } from "vitest";
import { verificationRows } from "./verification-model.js";

// kb web's verify table (issue 33 points 5 and 6): NaN/Inf where the error is not finite, never
// "0" beside a NaN count; the tolerance used, its norm and who stated it.

type Output = NonNullable<RunResults["verification"]>["outputs"][number];

const finite = { nan: 0, posInf: 0, negInf: 0, first: null };
const base: Output = {
  name: "out",
  dtype: "f32",
  shape: [4],
  rtol: 1e-5,
  atol: 1e-5,
  maxAbsError: 0,
  maxRelError: 0,
  mismatches: 1,
  firstMismatch: { index: [0], actual: null, expected: 0 },
  actualNonFinite: { nan: 1, posInf: 0, negInf: 0, first: { index: [0], value: "NaN" } },
  referenceNonFinite: finite,
  pass: false,
};

describe("kb web's verify table", () => {
  it("shows NaN errors beside a NaN count, as kb run --verify does (results with the shown maxima)", () => {
    const [row] = verificationRows([{ ...base, maxAbsErrorShown: "NaN", maxRelErrorShown: "NaN" }]);
    expect(row).toMatchObject({ nonFinite: "1 NaN (first [0])", maxAbsError: "NaN", maxRelError: "NaN" });
    expect(row?.firstMismatch).toBe("[0]: NaN vs 0");
  });

  it("shows NaN beside a NaN count in results written before the shown maxima", () => {
    const [row] = verificationRows([base]);
    expect(row).toMatchObject({ maxAbsError: "NaN", maxRelError: "NaN" });
    // An infinite error (null, no NaN anywhere) reads Inf.
    const [inf] = verificationRows([
      {
        ...base,
        maxAbsError: null,
        maxRelError: null,
        actualNonFinite: { ...finite, posInf: 1, first: { index: [2], value: "Inf" } },
      },
    ]);
    expect(inf).toMatchObject({ nonFinite: "1 Inf (first [2])", maxAbsError: "Inf", maxRelError: "Inf" });
  });

  it("shows finite errors as numbers and the tolerance used, with its norm and who stated it", () => {
    const [dtype, own] = verificationRows([
      {
        ...base,
        actualNonFinite: finite,
        maxAbsError: 0.25,
        maxRelError: 1,
        mismatches: 0,
        firstMismatch: null,
        pass: true,
      },
      {
        ...base,
        name: "o",
        rtol: 0.03125,
        atol: 0,
        norm: "relative-to-max",
        toleranceFrom: "check",
        referenceMaxAbs: 4,
      },
    ]);
    expect(dtype).toMatchObject({
      nonFinite: "0",
      maxAbsError: "0.25",
      tolerance: "rtol 0.00001 atol 0.00001",
    });
    expect(own?.tolerance).toBe("rtol 0.03125 x max|ref| 4, atol 0 (bench's)");
  });
});
