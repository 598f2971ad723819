import type { MemoryParams, OpRecord } from "@kb/oplog";
import { Tensor } from "@kb/tensor";
import { describe, expect, it } from "vitest";
import { DataExecutor } from "./executor.js";
import { accessesOf } from "./hazards.js";
import { MemoryStore } from "./memory-store.js";

let nextId = 0;
const atomic = (src: number, dst: number, nbytes: number, extra: Partial<MemoryParams>) =>
  ({
    id: nextId++,
    t_start: 0,
    t_end: 1,
    component_id: "sip0.cube0.pe0.pe_dma",
    op_kind: "memory",
    op_name: "dma_write",
    params: { src_addr: src, dst_addr: dst, nbytes, src_space: "tcm", dst_space: "hbm", ...extra },
    dependency_ids: [],
  }) as OpRecord;

const put = (store: MemoryStore, address: number, values: number[], dtype: "f32" | "i32" = "i32") =>
  store.write(address, Tensor.fromArray(values, [values.length], dtype).bytes);
const get = (store: MemoryStore, address: number, n: number, dtype: "f32" | "i32" = "i32") => [
  ...new Tensor([n], dtype, store.read(address, n * 4)).toFloat64Array(),
];

describe("phase 2 of atomics (dma_write with atomic)", () => {
  it("adds element by element in run order: two elements on one bin both count, old values returned", () => {
    const store = new MemoryStore();
    put(store, 0, [5, 7]);
    put(store, 1024, [1, 1, 1]);
    // Elements 0 and 1 add into bin 1 (offset 4), element 2 into bin 0.
    const runs = [0, 4, 4, 4, 4, 4, 8, 0, 4];
    new DataExecutor(store).run([
      atomic(1024, 0, 12, { index_runs: runs, atomic: { op: "add", dtype: "i32", old_addr: 2048 } }),
    ]);
    expect(get(store, 0, 2)).toEqual([6, 9]);
    expect(get(store, 2048, 3)).toEqual([7, 8, 5]);
  });

  it("i32 add wraps; cas writes only where old equals cmp; max and xchg", () => {
    const store = new MemoryStore();
    put(store, 0, [2147483647, 3, 4, 9]);
    put(store, 1024, [1, 30, 40, 2]);
    put(store, 1536, [3, 0]);
    const ops = [
      atomic(1024, 0, 4, { index_runs: [0, 0, 4], atomic: { op: "add", dtype: "i32", old_addr: 2048 } }),
      atomic(1028, 4, 8, {
        index_runs: [0, 0, 8],
        atomic: { op: "cas", dtype: "i32", old_addr: 2052, cmp_addr: 1536 },
      }),
      atomic(1036, 12, 4, { index_runs: [0, 0, 4], atomic: { op: "max", dtype: "i32", old_addr: 2060 } }),
    ];
    new DataExecutor(store).run(ops);
    expect(get(store, 0, 4)).toEqual([-2147483648, 30, 4, 9]);
    expect(get(store, 2048, 4)).toEqual([2147483647, 3, 4, 9]);
    new DataExecutor(store).run([
      atomic(1024, 0, 4, { index_runs: [0, 0, 4], atomic: { op: "xchg", dtype: "i32", old_addr: 2048 } }),
    ]);
    expect(get(store, 0, 1)).toEqual([1]);
    expect(get(store, 2048, 1)).toEqual([-2147483648]);
  });

  it("reads and writes the device span, and writes the old tile (hazards)", () => {
    const access = accessesOf(
      atomic(1024, 0, 8, {
        index_runs: [0, 40, 4, 4, 400, 4],
        atomic: { op: "min", dtype: "f32", old_addr: 2048 },
      }),
    );
    expect(access.reads).toEqual([
      { start: 1024, end: 1032 },
      { start: 40, end: 404 },
    ]);
    expect(access.writes).toEqual([
      { start: 40, end: 404 },
      { start: 2048, end: 2056 },
    ]);
  });
});
