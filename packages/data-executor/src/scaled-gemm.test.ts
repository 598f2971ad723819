import type { GemmParams, OpRecord } from "@kb/oplog";
import { type Dtype, Tensor } from "@kb/tensor";
import { describe, expect, it } from "vitest";
import { DataExecutor } from "./executor.js";
import { MemoryStore } from "./memory-store.js";

/** A scaled GEMM record (tl.dotScaled): out[2 x 2] = A[2 x 64] B[64 x 2], f8e4m3 in, f32 out. */
function scaledGemm(extra: Partial<GemmParams>): OpRecord {
  const transB = extra.transpose_b === true;
  return {
    id: 0,
    t_start: 0,
    t_end: 1,
    component_id: "sip0.cube0.pe0.pe_gemm",
    op_kind: "gemm",
    op_name: "gemm_mx_f8e4m3",
    params: {
      src_a_addr: 0,
      src_b_addr: 256,
      dst_addr: 512,
      shape_a: [2, 64],
      shape_b: transB ? [2, 64] : [64, 2],
      shape_out: [2, 2],
      dtype_in: "f8e4m3",
      dtype_acc: "f32",
      dtype_out: "f32",
      transpose_a: false,
      transpose_b: false,
      layout_a: "row_major",
      layout_b: "row_major",
      layout_out: "row_major",
      addr_space: "tcm",
      accumulate: false,
      scale_a_addr: 1024,
      scale_b_addr: 1088,
      ...extra,
    },
    dependency_ids: [],
  };
}

// A's rows are all 1 and all 0.5, B's columns all 1 and all -2; e8m0 scales (2^(byte - 127)) per
// block of 32 along K: A row 0 [1, 2], row 1 [0.5, 1]; B column 0 [1, 1], column 1 [4, 0.25].
//   C[0, 0] = 32 (1)(1)   + 32 (1 * 2)(1)          = 96
//   C[0, 1] = 32 (1)(-8)  + 32 (2)(-2 * 0.25)      = -256 - 32 = -288
//   C[1, 0] = 32 (0.25)(1) + 32 (0.5)(1)           = 8 + 16 = 24
//   C[1, 1] = 32 (0.25)(-8) + 32 (0.5)(-0.5)       = -64 - 8 = -72
function store(transB: boolean, aScaleBytes = [127, 128, 126, 127], bDtype: Dtype = "f8e4m3"): MemoryStore {
  const memory = new MemoryStore();
  const a = Array.from({ length: 128 }, (_, i) => (i < 64 ? 1 : 0.5));
  const b = transB
    ? Array.from({ length: 128 }, (_, i) => (i < 64 ? 1 : -2)) // [n, k]
    : Array.from({ length: 128 }, (_, i) => (i % 2 === 0 ? 1 : -2)); // [k, n]
  memory.write(0, Tensor.fromArray(a, [2, 64], "f8e4m3").bytes);
  memory.write(256, Tensor.fromArray(b, transB ? [2, 64] : [64, 2], bDtype).bytes);
  memory.write(1024, new Uint8Array(aScaleBytes));
  memory.write(1088, new Uint8Array([127, 127, 129, 125]));
  return memory;
}

const result = (memory: MemoryStore) =>
  Array.from(new Tensor([4], "f32", memory.read(512, 16)).toFloat64Array());

describe("phase 2 of a scaled GEMM (tl.dotScaled)", () => {
  it("multiplies each operand element by its block's e8m0 scale before the f32 GEMM", () => {
    const plain = store(false);
    new DataExecutor(plain).run([scaledGemm({})]);
    expect(result(plain)).toEqual([96, -288, 24, -72]);
    // B stored transposed ([n, k], Triton's rhs_scale layout alike): the same product.
    const transposed = store(true);
    new DataExecutor(transposed).run([scaledGemm({ transpose_b: true })]);
    expect(result(transposed)).toEqual([96, -288, 24, -72]);
  });

  it("a missing scale counts 1, and the e8m0 NaN byte (255) gives NaN in its row", () => {
    const unscaledA = store(false);
    const { scale_a_addr: _, ...rest } = scaledGemm({}).params as GemmParams;
    new DataExecutor(unscaledA).run([{ ...scaledGemm({}), params: rest } as OpRecord]);
    // Row 0 as with A's scales all 1: 32 + 32 = 64, 32 (-8) + 32 (-0.5) = -272.
    expect(result(unscaledA).slice(0, 2)).toEqual([64, -272]);
    const nan = store(false, [127, 255, 126, 127]);
    new DataExecutor(nan).run([scaledGemm({})]);
    const values = result(nan);
    expect(values.slice(0, 2).every(Number.isNaN)).toBe(true);
    expect(values.slice(2)).toEqual([24, -72]);
  });

  it("a mixed-format record (dtype_in_b f4e2m1) decodes B as fp4 and A as fp8: the same product", () => {
    // Tutorial 10's "mixed": A e4m3, B e2m1 ([n, k] as Triton stores it), both with e8m0 scales.
    const mixed = store(true, undefined, "f4e2m1");
    new DataExecutor(mixed).run([scaledGemm({ transpose_b: true, dtype_in_b: "f4e2m1" })]);
    expect(result(mixed)).toEqual([96, -288, 24, -72]);
  });
});

// nvfp4 (scale_dtype f8e4m3): out[2 x 2] = A[2 x 32] B[32 x 2] in f4e2m1, one f8e4m3 scale per 16
// along K. A's rows all 1 and all 0.5, B's columns all 1 and all -2; scales (values, not powers
// of two): A row 0 [1.5, 0.5], row 1 [2, 0.25]; B column 0 [1, 3], column 1 [0.5, 1].
//   C[0, 0] = 16 (1.5)(1)      + 16 (0.5)(3)         = 24 + 24 = 48
//   C[0, 1] = 16 (1.5)(-1)     + 16 (0.5)(-2)        = -24 - 16 = -40
//   C[1, 0] = 16 (0.5 * 2)(1)  + 16 (0.5 * 0.25)(3)  = 16 + 6 = 22
//   C[1, 1] = 16 (1)(-1)       + 16 (0.125)(-2)      = -16 - 4 = -20
describe("phase 2 of an nvfp4 scaled GEMM", () => {
  it("multiplies each element by its block's f8e4m3 scale value, one per 16 along K", () => {
    const memory = new MemoryStore();
    memory.write(
      0,
      Tensor.fromArray(
        Array.from({ length: 64 }, (_, i) => (i < 32 ? 1 : 0.5)),
        [2, 32],
        "f4e2m1",
      ).bytes,
    );
    memory.write(
      256,
      Tensor.fromArray(
        Array.from({ length: 64 }, (_, i) => (i % 2 === 0 ? 1 : -2)),
        [32, 2],
        "f4e2m1",
      ).bytes,
    );
    memory.write(1024, Tensor.fromArray([1.5, 0.5, 2, 0.25], [2, 2], "f8e4m3").bytes);
    memory.write(1088, Tensor.fromArray([1, 3, 0.5, 1], [2, 2], "f8e4m3").bytes);
    const record = scaledGemm({
      shape_a: [2, 32],
      shape_b: [32, 2],
      dtype_in: "f4e2m1",
      scale_dtype: "f8e4m3",
    });
    new DataExecutor(memory).run([{ ...record, op_name: "gemm_nv_f4e2m1" }]);
    expect(result(memory)).toEqual([48, -40, 22, -20]);
  });
});
