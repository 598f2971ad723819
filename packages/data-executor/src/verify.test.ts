import { Tensor } from "@kb/tensor";
import { describe, expect, it } from "vitest";
import type { NonFiniteOrigin } from "./executor.js";
import { TOLERANCES } from "./tolerance.js";
import { verify } from "./verify.js";
import { formatVerifyTable } from "./verify-table.js";

const finite = { nan: 0, posInf: 0, negInf: 0, first: null };
const inf = Number.POSITIVE_INFINITY;

/** 0, 0.25, 0.5, ... 2.75 as a [3, 4] tensor (all exact in every float dtype). */
const grid = (dtype: "f32" | "f16" | "bf16") =>
  Tensor.fromArray(
    Array.from({ length: 12 }, (_, i) => i / 4),
    [3, 4],
    dtype,
  );

describe("verify", () => {
  it("uses ADR-0020 D11's tolerances by default", () => {
    expect(TOLERANCES).toEqual({
      f32: { rtol: 1e-5, atol: 1e-5 },
      f16: { rtol: 1e-3, atol: 1e-3 },
      bf16: { rtol: 1e-2, atol: 1e-2 },
      i8: { rtol: 0, atol: 0 },
      i32: { rtol: 0, atol: 0 },
      i1: { rtol: 0, atol: 0 },
      u32: { rtol: 0, atol: 0 },
      u8: { rtol: 0, atol: 0 },
      u16: { rtol: 0, atol: 0 },
      i16: { rtol: 0, atol: 0 },
      i64: { rtol: 0, atol: 0 },
      u64: { rtol: 0, atol: 0 },
      f8e4m3: { rtol: 0.125, atol: 0.125 },
      f8e5m2: { rtol: 0.25, atol: 0.25 },
      f4e2m1: { rtol: 0.5, atol: 0.5 },
    });
  });

  it("passes an exact match with zero errors", () => {
    const report = verify({ c: grid("f32") }, { c: grid("f32") });
    expect(report.pass).toBe(true);
    expect(report.outputs).toEqual([
      {
        name: "c",
        dtype: "f32",
        shape: [3, 4],
        tolerance: { rtol: 1e-5, atol: 1e-5, norm: "elementwise", from: "dtype" },
        referenceMaxAbs: 2.75, // the largest |b| of grid()
        maxAbsError: 0,
        maxRelError: 0,
        mismatches: 0,
        firstMismatch: null,
        actualNonFinite: finite,
        referenceNonFinite: finite,
        pass: true,
      },
    ]);
  });

  it("fails an f16 element off by about 2e-3 and names it", () => {
    // Element [1, 2] (flat 6) is 0.5 in the reference.
    const reference = Tensor.fromArray([0, 0, 0, 0, 0, 0, 0.5, 0, 0, 0, 0, 0], [3, 4], "f16");
    const output = reference.clone();
    output.set([1, 2], 0.5 + 2e-3); // rounds to 0.501953125 = 0.5 + 4 * 2^-11 (the f16 step at 0.5)
    expect(output.get(1, 2)).toBe(0.501953125);
    // |a - b| = 2^-9 = 0.001953125 > atol + rtol * |b| = 1e-3 + 1e-3 * 0.5 = 0.0015.
    const report = verify({ out: output }, { out: reference });
    expect(report.pass).toBe(false);
    const [check] = report.outputs;
    expect(check).toMatchObject({
      name: "out",
      dtype: "f16",
      mismatches: 1,
      maxAbsError: 0.001953125,
      maxRelError: 0.00390625, // 2^-9 / 0.5
      pass: false,
      firstMismatch: { flat: 6, index: [1, 2], actual: 0.501953125, expected: 0.5 },
    });
    expect(check?.problem).toBeUndefined();
  });

  it("passes an f16 element within 1e-3 + 1e-3 * |b|", () => {
    const reference = Tensor.fromArray([0, 0, 0, 0, 0, 0, 0.5, 0, 0, 0, 0, 0], [3, 4], "f16");
    const output = reference.clone();
    output.set([1, 2], 0.5 + 2 * 2 ** -11); // |a - b| = 0.0009765625 <= 0.0015
    const report = verify({ out: output }, { out: reference });
    expect(report.pass).toBe(true);
    expect(report.outputs[0]).toMatchObject({
      mismatches: 0,
      maxAbsError: 0.0009765625,
      firstMismatch: null,
    });
  });

  it("counts every mismatch and reports the first in row-major order", () => {
    const reference = Tensor.fromArray([1, 2, 3, 4, 5, 6], [2, 3], "f32");
    const output = Tensor.fromArray([1, 2, 3.5, 4, 9, 6], [2, 3], "f32");
    const [check] = verify({ y: output }, { y: reference }).outputs;
    expect(check).toMatchObject({
      mismatches: 2,
      maxAbsError: 4, // |9 - 5|
      maxRelError: 0.8, // 4 / 5
      firstMismatch: { flat: 2, index: [0, 2], actual: 3.5, expected: 3 },
    });
  });

  it("applies bf16's 1e-2 tolerances", () => {
    const reference = Tensor.fromArray([1, 1], [2], "bf16");
    // 1 + 2^-7 (one bf16 step): |a - b| = 0.0078125 <= 1e-2 + 1e-2 * 1 = 0.02.
    expect(verify({ x: Tensor.fromArray([1 + 2 ** -7, 1], [2], "bf16") }, { x: reference }).pass).toBe(true);
    // 1 + 2^-5: |a - b| = 0.03125 > 0.02; f16's tolerance would already fail 2^-7.
    const [check] = verify({ x: Tensor.fromArray([1, 1 + 2 ** -5], [2], "bf16") }, { x: reference }).outputs;
    expect(check).toMatchObject({
      pass: false,
      mismatches: 1,
      maxAbsError: 0.03125,
      firstMismatch: { flat: 1, index: [1], actual: 1.03125, expected: 1 },
    });
    const f16 = Tensor.fromArray([1 + 2 ** -7], [1], "f16");
    expect(verify({ x: f16 }, { x: Tensor.fromArray([1], [1], "f16") }).pass).toBe(false);
  });

  it("compares i32 exactly: one off fails", () => {
    const reference = Tensor.fromArray([100000, -7, 2147483647], [3], "i32");
    expect(verify({ n: reference.clone() }, { n: reference }).pass).toBe(true);
    const [check] = verify(
      { n: Tensor.fromArray([100000, -6, 2147483647], [3], "i32") },
      { n: reference },
    ).outputs;
    expect(check).toMatchObject({
      tolerance: { rtol: 0, atol: 0 },
      pass: false,
      mismatches: 1,
      maxAbsError: 1,
      firstMismatch: { flat: 1, index: [1], actual: -6, expected: -7 },
    });
    const i8 = Tensor.fromArray([3], [1], "i8");
    expect(verify({ b: Tensor.fromArray([4], [1], "i8") }, { b: i8 }).outputs[0]?.mismatches).toBe(1);
  });

  it("follows numpy's allclose with equal_nan=False for NaN and infinities", () => {
    const reference = Tensor.fromArray([Number.NaN, 1, Number.NaN, inf, inf, -inf, inf, 2], [8], "f32");
    const output = Tensor.fromArray([Number.NaN, Number.NaN, 1, inf, -inf, -inf, 3e38, 2], [8], "f32");
    const [check] = verify({ v: output }, { v: reference }).outputs;
    // NaN vs NaN, NaN vs 1, 1 vs NaN, Inf vs -Inf and a finite value vs Inf mismatch; equal
    // infinities match.
    expect(check?.mismatches).toBe(5);
    expect(check?.firstMismatch).toEqual({ flat: 0, index: [0], actual: Number.NaN, expected: Number.NaN });
    expect(check?.maxAbsError).toBe(inf); // Inf - (-Inf) and Inf - 3e38; NaN errors are left out
    expect(check?.maxRelError).toBe(0); // only b = 1 (error NaN) and b = 2 (error 0) are finite and non-zero
    // The output has NaN at 0 and 1, Inf at 3, -Inf at 4 and 5 (3e38 is below f32's max, finite).
    expect(check?.actualNonFinite).toEqual({
      nan: 2,
      posInf: 1,
      negInf: 2,
      first: { flat: 0, index: [0], value: Number.NaN },
    });
    expect(check?.referenceNonFinite).toEqual({
      nan: 2,
      posInf: 3,
      negInf: 1,
      first: { flat: 0, index: [0], value: Number.NaN },
    });

    // A huge rtol does not make a finite value close to an infinite reference.
    const huge = { tolerances: { f32: { rtol: 1e30, atol: 1e30 } } };
    const far = verify(
      { v: Tensor.fromArray([1], [1], "f32") },
      { v: Tensor.fromArray([inf], [1], "f32") },
      huge,
    );
    expect(far.pass).toBe(false);
  });

  it("counts the output's NaN, +Inf and -Inf and gives the first one's index", () => {
    const reference = Tensor.fromArray([1, 2, 3, 4, 5, 6], [2, 3], "f32");
    const output = Tensor.fromArray([1, 2, 3.5, Number.NaN, -inf, Number.NaN], [2, 3], "f32");
    const [check] = verify({ y: output }, { y: reference }).outputs;
    expect(check).toMatchObject({
      actualNonFinite: { nan: 2, posInf: 0, negInf: 1, first: { flat: 3, index: [1, 0], value: Number.NaN } },
      referenceNonFinite: finite,
      mismatches: 4, // 3.5, NaN, -Inf, NaN
      maxAbsError: inf, // |-Inf - 5|; the NaN elements have no error
      firstMismatch: { flat: 2, index: [0, 2], actual: 3.5, expected: 3 },
      pass: false,
    });
    // Without the infinity, the maxima are those of the elements without a NaN: |3.5 - 3| = 0.5.
    const partly = Tensor.fromArray([1, 2, 3.5, Number.NaN, 5, 6], [2, 3], "f32");
    expect(verify({ y: partly }, { y: reference }).outputs[0]).toMatchObject({
      maxAbsError: 0.5,
      maxRelError: 0.5 / 3,
      actualNonFinite: { nan: 1, posInf: 0, negInf: 0, first: { flat: 3, index: [1, 0] } },
    });
  });

  it("an all-NaN output has NaN maxima, never an error of 0", () => {
    const output = Tensor.fromArray(new Array(12).fill(Number.NaN), [3, 4], "f32");
    const [check] = verify({ out: output }, { out: grid("f32") }).outputs;
    expect(check).toMatchObject({
      mismatches: 12,
      actualNonFinite: { nan: 12, posInf: 0, negInf: 0, first: { flat: 0, index: [0, 0] } },
      firstMismatch: { flat: 0, index: [0, 0], actual: Number.NaN, expected: 0 },
      pass: false,
    });
    expect(check?.maxAbsError).toBeNaN();
    expect(check?.maxRelError).toBeNaN();
  });

  it("counts an f16 overflow to Inf, and equal infinities still match with error 0", () => {
    const output = Tensor.fromArray([70000, -70000, 1], [3], "f16"); // beyond 65504: +-Inf in f16
    const reference = Tensor.fromArray([inf, -inf, 1], [3], "f16");
    const [check] = verify({ h: output }, { h: reference }).outputs;
    expect(check).toMatchObject({
      pass: true,
      maxAbsError: 0,
      maxRelError: 0,
      actualNonFinite: { nan: 0, posInf: 1, negInf: 1, first: { flat: 0, index: [0], value: inf } },
      referenceNonFinite: { nan: 0, posInf: 1, negInf: 1, first: { flat: 0, index: [0], value: inf } },
    });
  });

  it("counts a reference's NaN apart from the output's", () => {
    const [check] = verify(
      { r: Tensor.fromArray([0, 1, 2], [3], "bf16") },
      { r: Tensor.fromArray([1, Number.NaN, 2], [3], "bf16") },
    ).outputs;
    expect(check).toMatchObject({
      actualNonFinite: finite,
      referenceNonFinite: { nan: 1, posInf: 0, negInf: 0, first: { flat: 1, index: [1], value: Number.NaN } },
      mismatches: 2, // 0 vs 1, and 1 vs NaN: a NaN reference matches nothing
      maxAbsError: 1, // |0 - 1|; element 1 has no error
      pass: false,
    });
  });

  it("treats 0 and -0 as equal", () => {
    expect(
      verify({ z: Tensor.fromArray([-0], [1], "f16") }, { z: Tensor.fromArray([0], [1], "f16") }).pass,
    ).toBe(true);
  });

  it("takes tolerance overrides per dtype, inclusive at the bound", () => {
    const reference = Tensor.fromArray([1], [1], "f32");
    const output = Tensor.fromArray([1 + 2 ** -10], [1], "f32");
    expect(verify({ a: output }, { a: reference }).pass).toBe(false);
    const report = verify(
      { a: output },
      { a: reference },
      { tolerances: { f32: { rtol: 0, atol: 2 ** -10 } } },
    );
    expect(report.pass).toBe(true);
    expect(report.outputs[0]?.tolerance).toEqual({
      rtol: 0,
      atol: 2 ** -10,
      norm: "elementwise",
      from: "dtype",
    });
    // Other dtypes keep their defaults.
    const i32 = Tensor.fromArray([1], [1], "i32");
    const mixed = verify(
      { a: output, b: i32 },
      { a: reference, b: i32 },
      { tolerances: { f32: TOLERANCES.f16 } },
    );
    expect(mixed.outputs.map((check) => check.tolerance)).toEqual([
      { ...TOLERANCES.f16, norm: "elementwise", from: "dtype" },
      { ...TOLERANCES.i32, norm: "elementwise", from: "dtype" },
    ]);
  });

  it("rejects a tolerance that is negative or not finite", () => {
    const t = Tensor.fromArray([1], [1], "f32");
    expect(() => verify({ t }, { t }, { tolerances: { f32: { rtol: -1, atol: 0 } } })).toThrow(
      /TENSOR_INVALID.*the f32 tolerance's rtol must be a finite number >= 0, got -1\./,
    );
    expect(() => verify({ t }, { t }, { tolerances: { bf16: { rtol: 0, atol: Number.NaN } } })).toThrow(
      /TENSOR_INVALID/,
    );
  });

  it("rejects references and outputs that are not tensors", () => {
    const t = Tensor.fromArray([1], [1], "f32");
    expect(() => verify({ t }, { t: [1] as unknown as Tensor })).toThrow(
      /TENSOR_INVALID.*reference "t" must be a Tensor, got \[object Array\]/,
    );
    expect(() => verify({ t: 3 as unknown as Tensor }, { t })).toThrow(/output "t" must be a Tensor, got 3/);
  });

  it("reports shape and dtype differences and missing outputs without comparing", () => {
    const reference = grid("f16");
    const report = verify(
      { transposed: reference.reshape([4, 3]), wide: grid("f32"), both: Tensor.zeros([12], "bf16") },
      { transposed: reference, wide: reference, absent: reference, both: reference },
    );
    expect(report.pass).toBe(false);
    expect(report.outputs.map((check) => [check.name, check.problem])).toEqual([
      ["absent", "missing"],
      ["both", "shape [12] differs from the reference's [3, 4]; dtype bf16 differs from the reference's f16"],
      ["transposed", "shape [4, 3] differs from the reference's [3, 4]"],
      ["wide", "dtype f32 differs from the reference's f16"],
    ]);
    for (const check of report.outputs) {
      expect(check).toMatchObject({
        dtype: "f16",
        shape: [3, 4],
        pass: false,
        mismatches: 0,
        firstMismatch: null,
        actualNonFinite: finite,
        referenceNonFinite: finite,
      });
      expect(check.maxAbsError).toBeNaN();
      expect(check.maxRelError).toBeNaN();
    }
  });

  it("sorts checks by name and ignores outputs without a reference", () => {
    const t = Tensor.fromArray([1], [1], "f32");
    const report = verify({ extra: Tensor.fromArray([2], [1], "f32"), b: t, a: t }, { b: t, a: t });
    expect(report.pass).toBe(true);
    expect(report.outputs.map((check) => check.name)).toEqual(["a", "b"]);
  });

  it("passes when there are no references (nothing to check)", () => {
    expect(verify({ a: Tensor.fromArray([1], [1], "f32") }, {})).toEqual({ pass: true, outputs: [] });
  });

  it("compares tensors larger than one scratch chunk, and empty ones", () => {
    const n = 3 * 4096 + 5;
    const reference = Tensor.random([n], "bf16", { seed: 7 });
    const output = reference.clone();
    output.setFlat(n - 2, reference.getFlat(n - 2) + 0.5);
    const [check] = verify({ r: output }, { r: reference }).outputs;
    expect(check).toMatchObject({ mismatches: 1, firstMismatch: { flat: n - 2, index: [n - 2] } });
    const empty = Tensor.zeros([0, 3], "f32");
    expect(verify({ e: empty }, { e: empty.clone() }).outputs[0]).toMatchObject({
      pass: true,
      mismatches: 0,
    });
  });
});

describe("formatVerifyTable", () => {
  it("explains a relative error above rtol next to PASS: the element's expected value is near 0", () => {
    // Element 1: expected 0.0005, actual 0.001: |a - e| = 0.0005 <= atol 0.001 + rtol 0.001 x
    // 0.0005, so it matches, with a relative error of 0.0005 / 0.0005 = 1.
    const reference = Tensor.fromArray([1, 0.0005], [2], "f32");
    const output = Tensor.fromArray([1, 0.001], [2], "f32");
    const report = verify(
      { out: output },
      { out: reference },
      { tolerances: { f32: { rtol: 0.001, atol: 0.001 } } },
    );
    expect(report.pass).toBe(true);
    expect(formatVerifyTable(report)).toContain(
      "out: max rel err 1 is above rtol 0.001, yet every element matches: it comes from elements whose expected value is near 0, where |actual - expected| <= atol + rtol x |expected| is held by atol (0.001). If outputs this small are expected, the dtype's atol is loose for them: state the check's own tolerance (docs/verification.md).\nPASS: 1 of 1 output matches\n",
    );
  });

  it("lays out one aligned row per output and a final PASS/FAIL line", () => {
    const reference = Tensor.fromArray([0, 0, 0, 0, 0, 0, 0.5, 0, 0, 0, 0, 0], [3, 4], "f16");
    const output = reference.clone();
    output.set([1, 2], 0.501953125);
    const n = Tensor.fromArray([1, 2], [2], "i32");
    const report = verify({ out: output, n }, { out: reference, n, gone: n });
    expect(formatVerifyTable(report)).toBe(
      [
        "output  dtype  shape   non-finite  max abs err  max rel err  mismatches  first mismatch                           tolerance              result",
        "------  -----  ------  ----------  -----------  -----------  ----------  ---------------------------------------  ---------------------  -------------",
        "gone    i32    [2]     -                     -            -           -  -                                        exact                  FAIL: missing",
        "n       i32    [2]     0                     0            0      0 of 2  -                                        exact                  PASS",
        "out     f16    [3, 4]  0               0.00195      0.00391     1 of 12  [1, 2] actual 0.501953125, expected 0.5  rtol 0.001 atol 0.001  FAIL",
        "FAIL: 2 of 3 outputs do not match (gone, out)",
        "",
      ].join("\n"),
    );
  });

  it("shows non-finite counts beside the errors, notes a non-finite reference and names the op that produced the first", () => {
    const output = grid("f32");
    output.setFlat(3, Number.NaN);
    output.setFlat(5, inf);
    output.setFlat(6, -inf);
    const origin: NonFiniteOrigin = {
      id: 17,
      opName: "log",
      opKind: "math",
      componentId: "sip0.cube0.pe3.pe_math",
      tStartNs: 812,
      dst: 4096,
      index: 3,
      value: Number.NaN,
      inputNonFinite: false,
    };
    const report = {
      ...verify(
        { out: output, ref: Tensor.fromArray([0, 1], [2], "f32") },
        { out: grid("f32"), ref: Tensor.fromArray([Number.NaN, 1], [2], "f32") },
      ),
      firstNonFinite: origin,
    };
    // out: element [0, 3] (0.75) is NaN, [1, 1] (1.25) is Inf, [1, 2] (1.5) is -Inf, so the
    // largest error is Inf; ref: the reference's NaN at [0] matches nothing and has a NaN error.
    expect(formatVerifyTable(report)).toBe(
      [
        "output  dtype  shape   non-finite                           max abs err  max rel err  mismatches  first mismatch                    tolerance                  result",
        "------  -----  ------  -----------------------------------  -----------  -----------  ----------  --------------------------------  -------------------------  ------",
        "out     f32    [3, 4]  1 NaN, 1 Inf, 1 -Inf (first [0, 3])          Inf          Inf     3 of 12  [0, 3] actual NaN, expected 0.75  rtol 0.00001 atol 0.00001  FAIL",
        "ref     f32    [2]     0                                            NaN          NaN      1 of 2  [0] actual 0, expected NaN        rtol 0.00001 atol 0.00001  FAIL",
        "reference of ref has 1 NaN (first [0]): suspicious, a NaN in a reference matches nothing (not even a NaN); check how the bench computes it",
        "first non-finite value: op 17 (log on sip0.cube0.pe3.pe_math at t=812 ns), NaN at element 3 of its output",
        "FAIL: 2 of 2 outputs do not match (out, ref)",
        "",
      ].join("\n"),
    );
  });

  it("says a non-finite output came from the host's data when no op produced one, and nothing when unknown", () => {
    const output = Tensor.fromArray([inf, 1], [2], "f32");
    const reference = Tensor.fromArray([-inf, 1], [2], "f32");
    const report = verify({ x: output }, { x: reference });
    const table = formatVerifyTable({ ...report, firstNonFinite: null });
    expect(table).toContain(
      // Inf / Inf has no relative error: left out like a NaN's, beside the count of 1 Inf.
      "\nx       f32    [2]    1 Inf (first [0])          Inf            0      1 of 2  [0] actual Inf, expected -Inf  ",
    );
    expect(table).toContain(
      "\nreference of x has 1 -Inf (first [0]): only the same infinity in the output matches it\n",
    );
    expect(table).toContain(
      "\nfirst non-finite value: no math or GEMM op produced one; it came from the host's data (copies only move values)\n",
    );
    expect(formatVerifyTable(report)).not.toContain("first non-finite value");
    // An op that read the host's NaN passed it on; it did not produce it.
    const passedOn = formatVerifyTable({
      ...report,
      firstNonFinite: {
        id: 2,
        opName: "mul",
        opKind: "math",
        componentId: "sip0.cube1.pe0.pe_math",
        tStartNs: 40.5,
        dst: 64,
        index: 0,
        value: inf,
        inputNonFinite: true,
      },
    });
    expect(passedOn).toContain(
      "\nfirst non-finite value: op 2 (mul on sip0.cube1.pe0.pe_math at t=40.5 ns), Inf at element 0 of its output, passed on from its input: the host's data held it (no earlier op produced one)\n",
    );
    // A passing output's infinities are no news: neither the reference nor the origin is noted.
    const masked = formatVerifyTable({ ...verify({ x: reference }, { x: reference }), firstNonFinite: null });
    expect(masked).toContain(
      "\nx       f32    [2]    1 -Inf (first [0])            0            0      0 of 2  -  ",
    );
    expect(masked).not.toContain("reference of x");
    expect(masked).not.toContain("first non-finite value");
  });

  it("ends with a PASS line when every output matches", () => {
    const t = Tensor.fromArray([1e-7, 3], [2], "f32");
    const close = Tensor.fromArray([1.000001e-7, 3], [2], "f32");
    const table = formatVerifyTable(verify({ t: close }, { t }));
    expect(table.endsWith("\nPASS: 1 of 1 output matches\n")).toBe(true);
    expect(table).toMatch(/rtol 0\.00001 atol 0\.00001 {2}PASS$/m);
    expect(table).toMatch(/ \d\.\d\de-\d+ /); // tiny errors in exponent form
  });
});
