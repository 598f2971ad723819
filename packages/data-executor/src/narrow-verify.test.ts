import { Tensor } from "@kb/tensor";
import { describe, expect, it } from "vitest";
import { verify } from "./verify.js";

// fp8 and fp4 outputs: |actual - expected| <= atol + rtol |expected| with rtol = atol = one unit in
// the last place near 1 (f8e4m3 0.125): at 1 the bound is 0.25, two units (1.25) pass, three
// (1.375) fail. An output rounded the other way passes.
describe("verify of fp8 and fp4 outputs", () => {
  it("f8e4m3: values decoded exactly, compared within 0.125 + 0.125 |expected|", () => {
    const reference = Tensor.fromArray([1, 1, 448, -2], [4], "f8e4m3");
    const close = verify({ c: Tensor.fromArray([1.25, 1, 448, -2], [4], "f8e4m3") }, { c: reference });
    expect(close.pass).toBe(true);
    const far = verify({ c: Tensor.fromArray([1.375, 1, 448, -2], [4], "f8e4m3") }, { c: reference });
    expect(far.pass).toBe(false);
    expect(far.outputs[0]).toMatchObject({
      mismatches: 1,
      maxAbsError: 0.375,
      tolerance: { rtol: 0.125, atol: 0.125 },
    });
  });

  it("f4e2m1: against 1 (bound 0.5 + 0.5), 2 passes and 3 fails", () => {
    const reference = Tensor.fromArray([1, 1], [2], "f4e2m1");
    expect(verify({ c: Tensor.fromArray([2, 1], [2], "f4e2m1") }, { c: reference }).pass).toBe(true);
    expect(verify({ c: Tensor.fromArray([3, 1], [2], "f4e2m1") }, { c: reference }).pass).toBe(false);
  });
});
