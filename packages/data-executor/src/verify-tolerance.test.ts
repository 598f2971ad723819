import { Tensor } from "@kb/tensor";
import { describe, expect, it } from "vitest";
import { verify } from "./verify.js";
import { formatVerifyTable } from "./verify-table.js";

// Issue 33 point 6: a check states its own { rtol, atol } and norm; the report says which it used.

/** The cells of the table's row for `name`, split on the column gaps. */
function rowOf(table: string, name: string): string[] {
  const line = table.split("\n").find((text) => text.startsWith(`${name} `)) as string;
  return line.trim().split(/ {2,}/);
}

describe("a check's own tolerance", () => {
  // f16 values exactly representable: 5/1024 and 6/1024, a 20% relative error (1/1024 = 0.0009765625).
  const reference = Tensor.fromArray([5 / 1024], [1], "f16");
  const output = Tensor.fromArray([6 / 1024], [1], "f16");

  it("fails an f16 output near 0.005 with 20% error that the dtype's default passes", () => {
    // Default f16: |a - b| = 0.0009765625 <= 1e-3 + 1e-3 x 0.0048828125 = 0.0010048828: passes.
    expect(verify({ y: output }, { y: reference }).pass).toBe(true);
    // Own { rtol 1e-2, atol 1e-5 }: bound 1e-5 + 1e-2 x 0.0048828125 = 5.88e-5 < 0.00098: fails.
    const report = verify(
      { y: output },
      { y: reference },
      { outputTolerances: { y: { rtol: 1e-2, atol: 1e-5 } } },
    );
    expect(report.pass).toBe(false);
    expect(report.outputs[0]?.tolerance).toEqual({
      rtol: 1e-2,
      atol: 1e-5,
      norm: "elementwise",
      from: "check",
    });
  });

  it("passes an f32 output the default fails, and keeps the dtype's value of a field it does not state", () => {
    // 1.0001 in f32 is 1.00010001659393...; default f32 bound 1e-5 + 1e-5 x 1 = 2e-5: fails.
    const a = Tensor.fromArray([1.0001], [1], "f32");
    const b = Tensor.fromArray([1], [1], "f32");
    expect(verify({ x: a }, { x: b }).pass).toBe(false);
    // rtol 1e-3 with f32's atol 1e-5: bound 1.01e-3 >= 1.0000166e-4: passes.
    const report = verify({ x: a }, { x: b }, { outputTolerances: { x: { rtol: 1e-3 } } });
    expect(report.pass).toBe(true);
    expect(report.outputs[0]?.tolerance).toEqual({
      rtol: 1e-3,
      atol: 1e-5,
      norm: "elementwise",
      from: "check",
    });
  });

  it("says the dtype's default was used when the check states none", () => {
    const report = verify({ y: output }, { y: reference });
    expect(report.outputs[0]?.tolerance).toEqual({
      rtol: 1e-3,
      atol: 1e-3,
      norm: "elementwise",
      from: "dtype",
    });
  });
});

describe("the note on a PASS held by atol", () => {
  // 6/1024 against 5/1024 passes by atol: max rel err 0.2 is above rtol.
  const reference = Tensor.fromArray([5 / 1024], [1], "f16");
  const output = Tensor.fromArray([6 / 1024], [1], "f16");
  const advice = "state the check's own tolerance (docs/verification.md)";

  it("suggests stating a tolerance when the dtype's default let it pass", () => {
    expect(formatVerifyTable(verify({ y: output }, { y: reference }))).toContain(advice);
  });

  it("does not when the check stated its own", () => {
    const own = verify({ y: output }, { y: reference }, { outputTolerances: { y: { atol: 1e-3 } } });
    const table = formatVerifyTable(own);
    expect(table).toContain("y: max rel err 0.2 is above rtol 0.001");
    expect(table).not.toContain(advice);
  });
});

describe("the relative-to-max norm: |a - b| <= atol + rtol x max|b|", () => {
  // max|b| = 4 (the -4; the norm takes magnitudes). rtol 1/32: elementwise bound at 0.125 is
  // 0.00390625, relative-to-max bound everywhere is 0.125.
  const reference = Tensor.fromArray([-4, 0.125, 2], [3], "f32");
  const tolerance = { rtol: 1 / 32, atol: 0 };

  it("passes small elements whose error is small next to the largest", () => {
    const output = Tensor.fromArray([-4.0625, 0.1875, 2], [3], "f32"); // errors 0.0625, 0.0625, 0
    const elementwise = verify({ o: output }, { o: reference }, { outputTolerances: { o: tolerance } });
    expect(elementwise.outputs[0]).toMatchObject({ pass: false, mismatches: 1, firstMismatch: { flat: 1 } });
    const relMax = verify(
      { o: output },
      { o: reference },
      { outputTolerances: { o: { ...tolerance, norm: "relative-to-max" } } },
    );
    expect(relMax.outputs[0]).toMatchObject({ pass: true, mismatches: 0, referenceMaxAbs: 4 });
  });

  it("fails an element whose error exceeds rtol x max|b|", () => {
    const output = Tensor.fromArray([-4, 0.3125, 2.125], [3], "f32"); // errors 0, 0.1875, 0.125
    const report = verify(
      { o: output },
      { o: reference },
      { outputTolerances: { o: { ...tolerance, norm: "relative-to-max" } } },
    );
    // 0.1875 > 0.125 fails; 0.125 <= 0.125 passes.
    expect(report.outputs[0]).toMatchObject({ pass: false, mismatches: 1, firstMismatch: { flat: 1 } });
  });

  it("the table prints the tolerance used, its norm and who stated it", () => {
    const output = Tensor.fromArray([-4, 0.125, 2], [3], "f32");
    const table = formatVerifyTable(
      verify(
        { o: output, d: output },
        { o: reference, d: reference },
        { outputTolerances: { o: { ...tolerance, norm: "relative-to-max" } } },
      ),
    );
    expect(rowOf(table, "o")).toContain("rtol 0.03125 x max|ref| 4, atol 0 (bench's)");
    expect(rowOf(table, "d")).toContain("rtol 0.00001 atol 0.00001");
  });
});

describe("a bad tolerance is an error that names the output", () => {
  const t = Tensor.fromArray([1], [1], "f32");
  it.each([
    [{ rtol: -1 }, 'verify: output "t": tolerance rtol must be a finite number >= 0, got -1.'],
    [{ atol: Number.NaN }, 'verify: output "t": tolerance atol must be a finite number >= 0, got NaN.'],
    [
      { norm: "max" },
      'verify: output "t": tolerance norm must be "elementwise" or "relative-to-max", got "max".',
    ],
  ])("%o", (bad, message) => {
    expect(() => verify({ t }, { t }, { outputTolerances: { t: bad as never } })).toThrow(
      `[TENSOR_INVALID] ${message}`,
    );
  });
});
