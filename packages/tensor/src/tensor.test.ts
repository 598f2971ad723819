import { isKbError } from "@kb/errors";
import { describe, expect, it } from "vitest";
import { DTYPE_BYTES, DTYPES, formatShape, isDtype, isFloatDtype, shapeSize, Tensor } from "./index.js";

/** The KbError thrown by `call`, checked to be TENSOR_INVALID. */
function tensorError(call: () => unknown): string {
  try {
    call();
  } catch (error) {
    if (isKbError(error, "TENSOR_INVALID")) return error.message;
    throw error;
  }
  throw new Error("expected a TENSOR_INVALID error, nothing was thrown");
}

describe("dtypes and shapes", () => {
  it("lists the dtypes with their sizes", () => {
    expect(DTYPES).toEqual([
      "f32",
      "f16",
      "bf16",
      "i8",
      "i32",
      "i1",
      "u32",
      "u8",
      "u16",
      "i16",
      "i64",
      "u64",
      "f8e4m3",
      "f8e5m2",
      "f4e2m1",
    ]);
    expect(DTYPE_BYTES).toEqual({
      f32: 4,
      f16: 2,
      bf16: 2,
      i8: 1,
      i32: 4,
      i1: 1,
      u32: 4,
      u8: 1,
      u16: 2,
      i16: 2,
      i64: 8,
      u64: 8,
      f8e4m3: 1,
      f8e5m2: 1,
      f4e2m1: 1,
    });
    expect(DTYPES.filter(isFloatDtype)).toEqual(["f32", "f16", "bf16", "f8e4m3", "f8e5m2", "f4e2m1"]);
    expect(isDtype("bf16")).toBe(true);
    expect(isDtype("f64")).toBe(false);
    expect(isDtype(undefined)).toBe(false);
  });

  it("computes sizes and formats shapes", () => {
    expect(shapeSize([])).toBe(1);
    expect(shapeSize([2, 3, 4])).toBe(24);
    expect(shapeSize([2, 0, 3])).toBe(0);
    expect(formatShape([])).toBe("[]");
    expect(formatShape([2, 3])).toBe("[2, 3]");
    expect(tensorError(() => shapeSize([2, -1]))).toBe(
      "[TENSOR_INVALID] shape [2, -1] is invalid: dimension 1 must be a non-negative integer, got -1.",
    );
    expect(tensorError(() => shapeSize([2 ** 30, 2 ** 30, 2 ** 30]))).toContain("is too large");
  });
});

describe("new Tensor", () => {
  it("allocates zeroed row-major storage", () => {
    const tensor = new Tensor([2, 3], "f16");
    expect(tensor.shape).toEqual([2, 3]);
    expect(tensor.dtype).toBe("f16");
    expect(tensor.size).toBe(6);
    expect(tensor.nbytes).toBe(12);
    expect(tensor.strides).toEqual([3, 1]);
    expect(tensor.rank).toBe(2);
    expect(tensor.bytes).toEqual(new Uint8Array(12));
    expect(Object.isFrozen(tensor.shape)).toBe(true);
    expect(new Tensor([2, 0, 3], "f32").strides).toEqual([0, 3, 1]); // products of the later dims
    const scalar = new Tensor([], "i32");
    expect([scalar.size, scalar.nbytes, scalar.strides]).toEqual([1, 4, []]);
    expect(String(new Tensor([2, 3], "f16"))).toBe("Tensor(f16 [2, 3])");
  });

  it("copies the shape it is given", () => {
    const shape = [2, 2];
    const tensor = new Tensor(shape, "i8");
    shape[0] = 5;
    expect(tensor.shape).toEqual([2, 2]);
  });

  it("reads little-endian bytes and shares them", () => {
    const bytes = new Uint8Array([0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0xc0]); // 1.0f, -2.0f
    const tensor = new Tensor([2], "f32", bytes);
    expect(tensor.get(0)).toBe(1);
    expect(tensor.get(1)).toBe(-2);
    tensor.set([0], 0.5);
    expect([...bytes.subarray(0, 4)]).toEqual([0x00, 0x00, 0x00, 0x3f]);
    expect(new Tensor([2], "f16", new Uint8Array([0x00, 0x3c, 0x55, 0x35])).toFloat64Array()).toEqual(
      new Float64Array([1, 0.333251953125]),
    );
  });

  it("copies bytes that start at an offset the element type cannot be viewed at", () => {
    const buffer = new Uint8Array(9);
    buffer.set([0x00, 0x00, 0x80, 0x3f], 1);
    const misaligned = buffer.subarray(1); // 8 bytes at offset 1
    const tensor = new Tensor([2], "f32", misaligned);
    expect(tensor.get(0)).toBe(1);
    tensor.set([0], 2);
    expect(misaligned[3]).toBe(0x3f); // the source is untouched
    expect(tensor.bytes.byteOffset).toBe(0);
  });

  it("rejects bad shapes, dtypes and byte lengths, naming the shape and dtype", () => {
    expect(tensorError(() => new Tensor([2, -1], "f32"))).toBe(
      "[TENSOR_INVALID] Tensor(f32 [2, -1]): shape is invalid: dimension 1 must be a non-negative integer, got -1.",
    );
    expect(tensorError(() => new Tensor([1.5], "i8"))).toContain(
      "dimension 0 must be a non-negative integer, got 1.5",
    );
    expect(tensorError(() => new Tensor([2], "f64" as never))).toBe(
      '[TENSOR_INVALID] Tensor(f64 [2]): expected a dtype (f32, f16, bf16, i8, i32, i1, u32, u8, u16, i16, i64, u64, f8e4m3, f8e5m2, f4e2m1), got "f64".',
    );
    expect(tensorError(() => new Tensor([2, 3], "f16", new Uint8Array(10)))).toBe(
      "[TENSOR_INVALID] Tensor(f16 [2, 3]) needs 12 bytes (6 elements of 2), got 10.",
    );
    expect(tensorError(() => new Tensor([2], "i8", [1, 2] as never))).toContain("bytes must be a Uint8Array");
  });
});

describe("element access", () => {
  const values = [1, 2, 3, 4, 5, 6];

  it("gets and sets by index in row-major order", () => {
    const tensor = Tensor.fromArray(values, [2, 3], "f32");
    expect(tensor.get(0, 1)).toBe(2);
    expect(tensor.get(1, 2)).toBe(6);
    tensor.set([1, 0], 10);
    expect(tensor.getFlat(3)).toBe(10);
    tensor.setFlat(5, -1);
    expect(tensor.get(1, 2)).toBe(-1);
    const scalar = Tensor.full([], 7, "i32");
    expect(scalar.get()).toBe(7);
  });

  it("rounds what is stored to the dtype", () => {
    const half = Tensor.zeros([2], "f16");
    half.set([0], 1 / 3);
    expect(half.get(0)).toBe(0.333251953125);
    expect([...half.bytes.subarray(0, 2)]).toEqual([0x55, 0x35]);
    const int8 = Tensor.zeros([3], "i8");
    int8.setFlat(0, 300);
    int8.setFlat(1, -2.5);
    int8.setFlat(2, Number.NaN);
    expect(int8.toFloat64Array()).toEqual(new Float64Array([127, -2, 0]));
    const bf16 = Tensor.zeros([1], "bf16");
    bf16.setFlat(0, 1 + 3 * 2 ** -8);
    expect([...bf16.bytes]).toEqual([0x82, 0x3f]);
  });

  it("names the index and the shape when an index is wrong", () => {
    const tensor = Tensor.fromArray(values, [2, 3], "f32");
    expect(tensorError(() => tensor.get(2, 0))).toBe(
      "[TENSOR_INVALID] Tensor(f32 [2, 3]): index [2, 0] is out of range for shape [2, 3]: entry 0 must be an integer in [0, 2), got 2.",
    );
    expect(tensorError(() => tensor.get(0, -1))).toContain("entry 1 must be an integer in [0, 3), got -1");
    expect(tensorError(() => tensor.get(0, 1.5))).toContain("got 1.5");
    expect(tensorError(() => tensor.get(1))).toBe(
      "[TENSOR_INVALID] Tensor(f32 [2, 3]): index [1] has 1 entry, expected 2 (one per dimension of [2, 3]).",
    );
    expect(tensorError(() => tensor.set([0, 0, 0], 1))).toContain(
      "index [0, 0, 0] has 3 entries, expected 2",
    );
    expect(tensorError(() => tensor.getFlat(6))).toBe(
      "[TENSOR_INVALID] Tensor(f32 [2, 3]): flat index must be an integer in [0, 6), got 6.",
    );
    expect(tensorError(() => tensor.setFlat(-1, 0))).toContain("got -1");
  });
});

describe("bulk conversion", () => {
  it("decodes every dtype to Float64Array and Float32Array", () => {
    const values = [1.5, -2, 0.1, 100000, Number.NaN];
    const f32 = Tensor.fromArray(values, [5], "f32");
    expect([...f32.toFloat64Array()]).toEqual(values.map(Math.fround));
    const f16 = Tensor.fromArray(values, [5], "f16");
    expect([...f16.toFloat64Array()]).toEqual([
      1.5,
      -2,
      0.0999755859375,
      Number.POSITIVE_INFINITY,
      Number.NaN,
    ]);
    expect([...f16.toFloat32Array()]).toEqual([...f16.toFloat64Array()]);
    const bf16 = Tensor.fromArray(values, [5], "bf16");
    expect([...bf16.toFloat64Array()]).toEqual([1.5, -2, 0.10009765625, 99840, Number.NaN]);
    expect([...bf16.toFloat32Array()]).toEqual([...bf16.toFloat64Array()]);
    const i8 = Tensor.fromArray([1.5, -2, 0.1, 1000, Number.NaN], [5], "i8");
    expect([...i8.toFloat32Array()]).toEqual([2, -2, 0, 127, 0]);
    const i32 = Tensor.fromArray([2 ** 24 + 1, -7], [2], "i32");
    expect([...i32.toFloat64Array()]).toEqual([2 ** 24 + 1, -7]);
    expect([...i32.toFloat32Array()]).toEqual([2 ** 24, -7]); // binary32 cannot hold 2^24 + 1
  });

  it("returns copies", () => {
    const tensor = Tensor.full([2], 1, "f32");
    tensor.toFloat32Array()[0] = 5;
    expect(tensor.get(0)).toBe(1);
  });

  it("fromArray accepts typed arrays and checks the length", () => {
    const tensor = Tensor.fromArray(new Float32Array([1, 2, 3, 4]), [2, 2], "bf16");
    expect([...tensor.toFloat64Array()]).toEqual([1, 2, 3, 4]);
    expect(tensorError(() => Tensor.fromArray([1, 2, 3], [2, 2], "f32"))).toBe(
      "[TENSOR_INVALID] Tensor.fromArray: Tensor(f32 [2, 2]) holds 4 elements, got 3 values.",
    );
  });

  it("zeros and full", () => {
    expect(Tensor.zeros([2, 2], "bf16").toFloat64Array()).toEqual(new Float64Array(4));
    expect([...Tensor.full([2, 2], 2.5, "i8").toFloat64Array()]).toEqual([2, 2, 2, 2]);
    expect([...Tensor.full([3], 1 / 3, "bf16").toFloat64Array()]).toEqual([
      0.333984375, 0.333984375, 0.333984375,
    ]);
    expect(Tensor.full([0], 1, "f16").size).toBe(0);
  });
});

describe("views and copies", () => {
  it("reinterpret reads the same bytes as another dtype, scaling the last dimension", () => {
    const f32 = Tensor.fromArray([1, 1, 1, -2, -2, -2], [2, 3], "f32");
    const i8 = f32.reinterpret("i8");
    expect(i8.shape).toEqual([2, 12]);
    expect([...i8.toFloat64Array().subarray(0, 4)]).toEqual([0, 0, -128, 63]); // 1.0f = 0x3f800000
    const f16 = Tensor.fromArray([0, 0x3c, 0, 0x40, 0, 0, 0, 0], [2, 4], "i8").reinterpret("f16");
    expect(f16.shape).toEqual([2, 2]);
    expect([...f16.toFloat64Array()]).toEqual([1, 2, 0, 0]);
    const bf16 = Tensor.fromArray([1], [1], "f16").reinterpret("bf16");
    expect([...bf16.bytes]).toEqual([0x00, 0x3c]);
    expect(Tensor.zeros([], "f16").reinterpret("bf16").shape).toEqual([]);
  });

  it("reinterpret shares storage", () => {
    const f32 = Tensor.zeros([1], "f32");
    f32.reinterpret("i32").setFlat(0, 0x3f800000);
    expect(f32.get(0)).toBe(1);
  });

  it("reinterpret rejects a last dimension that does not divide", () => {
    expect(tensorError(() => Tensor.zeros([2, 3], "i8").reinterpret("f16"))).toBe(
      "[TENSOR_INVALID] Tensor(i8 [2, 3]).reinterpret(f16): the last dimension holds 3 bytes, not a multiple of f16's 2.",
    );
    expect(tensorError(() => Tensor.zeros([], "f32").reinterpret("i8"))).toContain("reshape it to [1] first");
  });

  it("reshape keeps the elements and shares storage", () => {
    const tensor = Tensor.fromArray([1, 2, 3, 4, 5, 6], [2, 3], "i32");
    const reshaped = tensor.reshape([3, 2]);
    expect(reshaped.get(2, 1)).toBe(6);
    expect(reshaped.strides).toEqual([2, 1]);
    reshaped.set([0, 0], 9);
    expect(tensor.get(0, 0)).toBe(9);
    expect(tensorError(() => tensor.reshape([4, 2]))).toBe(
      "[TENSOR_INVALID] Tensor(i32 [2, 3]).reshape([4, 2]): the new shape has 8 elements, the tensor 6.",
    );
  });

  it("clone copies; equals compares shape, dtype and bytes", () => {
    const tensor = Tensor.fromArray([1, 2, 3], [3], "f16");
    const copy = tensor.clone();
    expect(copy.equals(tensor)).toBe(true);
    copy.setFlat(0, 7);
    expect(tensor.get(0)).toBe(1);
    expect(copy.equals(tensor)).toBe(false);
    expect(tensor.equals(tensor.reshape([1, 3]))).toBe(false);
    expect(tensor.equals(tensor.reinterpret("bf16"))).toBe(false);
    expect(Tensor.full([1], 0, "f32").equals(Tensor.full([1], -0, "f32"))).toBe(false);
    expect(Tensor.full([5], Number.NaN, "f16").equals(Tensor.full([5], Number.NaN, "f16"))).toBe(true);
  });
});
