import { describe, expect, it } from "vitest";
import { buildProgram, SCAN_KIND } from "./build.js";
import { check } from "./check.js";
import { kernelSource } from "./codegen.js";
import { scan } from "./reference/scan.js";
import { tensor } from "./reference/tensor.js";

// The scan step (kind 31): tl.cumsum / tl.cumprod along either axis, the evaluator written from
// the README ("Reductions and softmax", "Integer arithmetic wraps"), and the machine agreeing.
const values = (t: { data: Float64Array }) => [...t.data];

describe("the evaluator's scans", () => {
  it("cumprod on floats multiplies in f64 and rounds each element once; on integers wraps exactly", () => {
    // Along axis 0 of [[1, 2, 3], [4, 0.5, -2]]: [[1, 2, 3], [4, 1, -6]].
    expect(values(scan("cumprod", tensor([1, 2, 3, 4, 0.5, -2], [2, 3], "f32"), 0))).toEqual([
      1, 2, 3, 4, 1, -6,
    ]);
    // f32 along axis 1: 3, 4.5, 6.75.
    expect(values(scan("cumprod", tensor([3, 1.5, 1.5], [1, 3], "f32"), 1))).toEqual([3, 4.5, 6.75]);
    // i32: 100000 x 100001 x 100002 x 100003 wraps modulo 2^32 (by hand, exact integers).
    expect(values(scan("cumprod", tensor([100000, 100001, 100002, 100003], [1, 4], "i32"), 1))).toEqual([
      100000, 1410165408, -1595066048, -599592000,
    ]);
    // u8: 15, 240, 4080 mod 256 = 240.
    expect(values(scan("cumprod", tensor([15, 16, 17], [3, 1], "u8"), 0))).toEqual([15, 240, 240]);
    // cumsum: i8 100 + 100 = 200 -> -56.
    expect(values(scan("cumsum", tensor([100, 100], [2, 1], "i8"), 0))).toEqual([100, -56]);
  });
});

describe("tl.cumsum / tl.cumprod in the differential tester (kind 31)", () => {
  it.each([
    [0, 0, "cumsum", 0],
    [1, 1, "cumprod", 1],
    [3, 1, "cumprod", 0],
    [4, 1, "cumprod", 1],
  ] as const)(
    "load dtype %i, b = %i (%s along axis %i): the kernel and the machine agree with the evaluator",
    async (c, b, op, axis) => {
      // A load of 5 columns of DTYPES[c], then the scan of it.
      const p = buildProgram({
        seed: 7,
        rows: 9,
        blockRows: 3,
        pes: 1,
        persistent: false,
        special: false,
        steps: [
          { kind: 0, a: 0, b: 3, c, d: 0 },
          { kind: SCAN_KIND, a: 0, b, c: axis, d: 0 },
        ],
      });
      const step = p.steps.find((s) => s.kind === "scan");
      expect(step).toMatchObject({ kind: "scan", op, axis });
      expect(kernelSource(p)).toContain(`await tl.${op}(v0, ${axis});`);
      expect((await check(p)).failure).toBeNull();
    },
    120_000,
  );
});
