import type { GemmParams, MathParams, MemoryParams, OpRecord } from "@kb/oplog";
import { type Dtype, Tensor } from "@kb/tensor";
import { describe, expect, it } from "vitest";
import { DataExecutor } from "./executor.js";
import { MemoryStore } from "./memory-store.js";
import { GemmPool } from "./node.js";

let nextId = 0;
function record(
  op_kind: OpRecord["op_kind"],
  op_name: string,
  params: object,
  t = nextId,
  deps: number[] = [],
): OpRecord {
  return {
    id: nextId++,
    t_start: t,
    t_end: t + 1,
    component_id: "sip0.cube0.pe0.pe_x",
    op_kind,
    op_name,
    params,
    dependency_ids: deps,
  } as OpRecord;
}

const copy = (src: number, dst: number, nbytes: number, extra: Partial<MemoryParams> = {}) =>
  record("memory", "dma_read", {
    src_addr: src,
    dst_addr: dst,
    nbytes,
    src_space: "hbm",
    dst_space: "tcm",
    ...extra,
  });

function gemm(
  a: number,
  b: number,
  out: number,
  m: number,
  n: number,
  k: number,
  extra: Partial<GemmParams> = {},
) {
  const transA = extra.transpose_a ?? false;
  const transB = extra.transpose_b ?? false;
  return record("gemm", `gemm_${extra.dtype_in ?? "f32"}`, {
    src_a_addr: a,
    src_b_addr: b,
    dst_addr: out,
    shape_a: transA ? [k, m] : [m, k],
    shape_b: transB ? [n, k] : [k, n],
    shape_out: [m, n],
    dtype_in: "f32",
    dtype_acc: "f32",
    dtype_out: "f32",
    transpose_a: false,
    transpose_b: false,
    layout_a: "row_major",
    layout_b: "row_major",
    layout_out: "row_major",
    addr_space: "tcm",
    accumulate: false,
    ...extra,
  });
}

function math(op: string, inputs: number[], shape: number[], out: number, extra: Partial<MathParams> = {}) {
  return record("math", op, {
    op,
    input_addrs: inputs,
    input_shapes: inputs.map(() => shape),
    dst_addr: out,
    shape_out: shape,
    dtype: "f32",
    axis: null,
    addr_space: "tcm",
    ...extra,
  });
}

function put(store: MemoryStore, address: number, values: number[], shape: number[], dtype: Dtype = "f32") {
  store.write(address, Tensor.fromArray(values, shape, dtype).bytes);
}
function get(store: MemoryStore, address: number, shape: number[], dtype: Dtype = "f32"): number[] {
  const t = new Tensor(
    shape,
    dtype,
    store.read(
      address,
      shape.reduce((a, b) => a * b, 1) * (dtype === "f32" || dtype === "i32" ? 4 : dtype === "i8" ? 1 : 2),
    ),
  );
  return [...t.toFloat64Array()];
}

describe("DataExecutor", () => {
  it("copies strided rows byte for byte", () => {
    const store = new MemoryStore();
    put(store, 0, [1, 2, 3, 4, 5, 6, 7, 8], [8]);
    // 2 rows of 2 f32 from a row stride of 16 B into a packed 8 B stride.
    new DataExecutor(store).run([copy(0, 1024, 16, { rows: 2, src_stride: 16, dst_stride: 8 })]);
    expect(get(store, 1024, [4])).toEqual([1, 2, 5, 6]);
  });

  it("a masked copy moves only its runs; a load's masked-off bytes get mask_fill (other)", () => {
    const store = new MemoryStore();
    put(store, 0, [1, 2, 3, 4, 5, 6, 7, 8], [8]);
    // A 2 x 3 f32 tile from a row stride of 16 B: columns 0-1 of row 0 and column 1 of row 1 on;
    // the rest of the packed tile is -1 (f32 0xbf800000, little-endian).
    const fill = [0x00, 0x00, 0x80, 0xbf];
    const runs = [0, 8, 16, 4];
    new DataExecutor(store).run([
      copy(0, 1024, 24, { rows: 2, src_stride: 16, dst_stride: 12, mask_runs: runs, mask_fill: fill }),
    ]);
    expect(get(store, 1024, [6])).toEqual([1, 2, -1, -1, 6, -1]);
    // A masked store (no fill) leaves the destination's masked-off bytes as they were.
    put(store, 2048, [9, 9, 9, 9], [4]);
    new DataExecutor(store).run([copy(1024, 2048, 16, { mask_runs: [4, 8] })]);
    expect(get(store, 2048, [4])).toEqual([9, 2, -1, 9]);
  });

  it("GEMM: [[1,2],[3,4]] @ [[5,6],[7,8]] = [[19,22],[43,50]]; accumulate adds; transposed B reads B^T", () => {
    const store = new MemoryStore();
    put(store, 0, [1, 2, 3, 4], [2, 2]);
    put(store, 64, [5, 6, 7, 8], [2, 2]);
    const executor = new DataExecutor(store);
    executor.run([gemm(0, 64, 128, 2, 2, 2)]);
    expect(get(store, 128, [2, 2])).toEqual([19, 22, 43, 50]);
    executor.run([gemm(0, 64, 128, 2, 2, 2, { accumulate: true })]);
    expect(get(store, 128, [2, 2])).toEqual([38, 44, 86, 100]);
    // B stored as [[5,7],[6,8]] and flagged transposed is the same logical B.
    put(store, 256, [5, 7, 6, 8], [2, 2]);
    executor.run([gemm(0, 256, 320, 2, 2, 2, { transpose_b: true })]);
    expect(get(store, 320, [2, 2])).toEqual([19, 22, 43, 50]);
    expect(executor.stats.gemmFlops).toBe(3 * 2 * 8);
  });

  it("f16 inputs accumulate in f32 and round once to f16; i8 inputs are exact in i32", () => {
    const store = new MemoryStore();
    // 1 x 3 @ 3 x 1: 2048 + 1 + 1 = 2050 exactly in f32, representable in f16 (spacing 2 above 2048).
    put(store, 0, [2048, 1, 1], [1, 3], "f16");
    put(store, 64, [1, 1, 1], [3, 1], "f16");
    new DataExecutor(store).run([gemm(0, 64, 128, 1, 1, 3, { dtype_in: "f16", dtype_out: "f16" })]);
    expect(get(store, 128, [1], "f16")).toEqual([2050]);
    put(store, 256, [127, -128, 100], [1, 3], "i8");
    put(store, 320, [127, 127, 1], [3, 1], "i8");
    new DataExecutor(store).run([
      gemm(256, 320, 384, 1, 1, 3, { dtype_in: "i8", dtype_acc: "i32", dtype_out: "i32" }),
    ]);
    expect(get(store, 384, [1], "i32")).toEqual([127 * 127 - 128 * 127 + 100]);
  });

  it("math ops: softmax of [0, ln 3] is [0.25, 0.75]; sum and max along an axis; where, clamp, fill, iota, cast", () => {
    const store = new MemoryStore();
    put(store, 0, [0, Math.log(3)], [1, 2]);
    put(store, 64, [1, 2, 3, 4, 5, 6], [2, 3]);
    put(store, 128, [1, 0, 1, 0, 0, 1], [2, 3]);
    const executor = new DataExecutor(store);
    executor.run([
      math("softmax", [0], [1, 2], 1024, { axis: 1 }),
      math("sum", [64], [2, 3], 1088, { axis: 0, shape_out: [1, 3] }),
      math("max", [64], [2, 3], 1152, { axis: 1, shape_out: [2, 1] }),
      math("where", [128, 64, 64], [2, 3], 1216),
      math("clamp", [64], [2, 3], 1280, { scalars: [2, 4] }),
      math("fill", [], [4], 1344, { scalars: [7] }),
      math("iota", [], [4], 1408, { scalars: [3], dtype: "i32" }),
      math("cast", [64], [2, 3], 1472, { dtype: "f16", input_dtype: "f32" }),
      math("mul", [64], [2, 3], 1536, { scalars: [0.5] }),
    ]);
    expect(get(store, 1024, [2])).toEqual([0.25, 0.75]);
    expect(get(store, 1088, [3])).toEqual([5, 7, 9]);
    expect(get(store, 1152, [2])).toEqual([3, 6]);
    expect(get(store, 1216, [6])).toEqual([1, 2, 3, 4, 5, 6]);
    expect(get(store, 1280, [6])).toEqual([2, 2, 3, 4, 4, 4]);
    expect(get(store, 1344, [4])).toEqual([7, 7, 7, 7]);
    expect(get(store, 1408, [4], "i32")).toEqual([3, 4, 5, 6]);
    expect(get(store, 1472, [6], "f16")).toEqual([1, 2, 3, 4, 5, 6]);
    expect(get(store, 1536, [6])).toEqual([0.5, 1, 1.5, 2, 2.5, 3]);
  });

  it("batches independent GEMMs of one signature past unrelated ops, never past a conflicting one", () => {
    const store = new MemoryStore();
    put(store, 0, [1, 0, 0, 1], [2, 2]); // identity
    put(store, 64, [1, 2, 3, 4], [2, 2]);
    put(store, 128, [5, 6, 7, 8], [2, 2]);
    const executor = new DataExecutor(store);
    executor.run([
      gemm(0, 64, 1000, 2, 2, 2), // I @ X -> 1000
      math("fill", [], [4], 2000, { scalars: [1] }), // unrelated
      gemm(0, 128, 1100, 2, 2, 2), // independent: joins the first
      copy(1000, 128, 16), // overwrites the B of the next GEMM
      gemm(0, 128, 1200, 2, 2, 2), // must see the copy: stays after it
    ]);
    expect(executor.stats.gemmBatches).toBe(1);
    expect(executor.stats.batchedGemms).toBe(2);
    expect(get(store, 1100, [4])).toEqual([5, 6, 7, 8]);
    expect(get(store, 1200, [4])).toEqual([1, 2, 3, 4]);
  });

  it("honours explicit dependency ids; debug mode keeps every op's output", () => {
    const store = new MemoryStore();
    put(store, 0, [1, 0, 0, 1], [2, 2]);
    const first = math("fill", [], [4], 5000, { scalars: [2] });
    // Address-independent of the fill, but declared dependent: not pulled before it.
    const g1 = gemm(0, 0, 1000, 2, 2, 2);
    const g2 = gemm(0, 0, 1100, 2, 2, 2);
    const dependent = { ...g2, dependency_ids: [first.id] } as OpRecord;
    const executor = new DataExecutor(store, { debug: true });
    executor.run([g1, first, dependent]);
    expect(executor.stats.gemmBatches).toBe(0);
    expect(executor.snapshots.map((s) => s.opName)).toEqual(["gemm_f32", "fill", "gemm_f32"]);
    expect([...new Tensor([4], "f32", executor.snapshots[1]?.bytes as Uint8Array).toFloat64Array()]).toEqual([
      2, 2, 2, 2,
    ]);
  });

  it("a worker pool gives the same bytes as one thread", async () => {
    const records = [0, 1, 2, 3].map((i) => gemm(0, 1 << 20, (2 + i) << 20, 96, 80, 64));
    const run = (pool: GemmPool | null) => {
      const store = new MemoryStore();
      store.write(0, Tensor.random([96, 64], "f32", { seed: 1 }).bytes);
      store.write(1 << 20, Tensor.random([64, 80], "f32", { seed: 2 }).bytes);
      new DataExecutor(store, { pool }).run(records);
      return [0, 1, 2, 3].map((i) => store.read((2 + i) << 20, 96 * 80 * 4));
    };
    const pool = await GemmPool.create(2, { minSplitFlops: 0 });
    try {
      expect(run(pool)).toEqual(run(null));
    } finally {
      await pool.close();
    }
  });

  it("reports progress every 1024 ops (the CLI's phase-2 ETA)", () => {
    const store = new MemoryStore();
    const calls: number[] = [];
    const records = Array.from({ length: 2500 }, () => math("fill", [], [4], 64, { scalars: [1] }));
    new DataExecutor(store, { onProgress: (done) => calls.push(done) }).run(records);
    expect(calls).toEqual([1024, 2048]);
  });

  it("names the first math op whose output holds a NaN, not a later one, and not a finite one before it", () => {
    const store = new MemoryStore();
    put(store, 0, [4, -1], [2]);
    const halve = math("mul", [0], [2], 64, { scalars: [0.5] }); // [2, -0.5]: finite
    const root = math("sqrt", [64], [2], 128); // [sqrt 2, NaN]: the first NaN, at element 1
    const log = math("log", [64], [2], 192); // [log 2, NaN]: later, not named
    const executor = new DataExecutor(store);
    expect(executor.firstNonFinite).toBeNull();
    executor.run([halve, root]);
    executor.run([log]);
    expect(executor.firstNonFinite).toEqual({
      id: root.id,
      opName: "sqrt",
      opKind: "math",
      componentId: "sip0.cube0.pe0.pe_x",
      tStartNs: root.t_start,
      dst: 128,
      index: 1,
      value: Number.NaN,
      inputNonFinite: false,
    });
  });

  it("a GEMM whose f32 sum overflows f16 produced an Inf: the value as stored counts", () => {
    const store = new MemoryStore();
    put(store, 0, [60000, 60000], [1, 2], "f16"); // f16's largest finite value is 65504
    put(store, 64, [0, 1, 0, 1], [2, 2], "f16");
    const product = gemm(0, 64, 128, 1, 2, 2, { dtype_in: "f16", dtype_out: "f16" }); // [0, 120000]
    const executor = new DataExecutor(store);
    executor.run([product]);
    expect(get(store, 128, [2], "f16")).toEqual([0, Number.POSITIVE_INFINITY]);
    expect(executor.firstNonFinite).toMatchObject({
      id: product.id,
      opName: "gemm_f16",
      opKind: "gemm",
      dst: 128,
      index: 1,
      value: Number.POSITIVE_INFINITY,
      inputNonFinite: false,
    });
  });

  it("a NaN of the host's data moved by copies only names no op; an op that reads it passes it on", () => {
    const store = new MemoryStore();
    put(store, 0, [1, Number.NaN], [2]);
    const executor = new DataExecutor(store);
    executor.run([copy(0, 1024, 8)]);
    expect(get(store, 1024, [2])).toEqual([1, Number.NaN]);
    expect(executor.firstNonFinite).toBeNull();
    // exp(NaN) is NaN, but the NaN was the host's: the record says its input held one.
    const exp = math("exp", [1024], [2], 2048);
    executor.run([exp]);
    expect(executor.firstNonFinite).toMatchObject({ id: exp.id, index: 1, inputNonFinite: true });
    // Integer outputs are never non-finite: an i32 op leaves the record alone.
    const fresh = new DataExecutor(store);
    fresh.run([math("iota", [], [4], 4096, { scalars: [0], dtype: "i32" })]);
    expect(fresh.firstNonFinite).toBeNull();
  });

  it("an op it cannot run is an error naming the record", () => {
    const store = new MemoryStore();
    expect(() => new DataExecutor(store).run([math("mish", [0], [2], 64)])).toThrow(
      /op \d+ \(mish on sip0\.cube0\.pe0\.pe_x at t=\d+ ns\): unknown math op "mish"/,
    );
  });
});
