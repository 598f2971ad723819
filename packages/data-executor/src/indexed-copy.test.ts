import type { MemoryParams, OpRecord } from "@kb/oplog";
import { Tensor } from "@kb/tensor";
import { describe, expect, it } from "vitest";
import { DataExecutor } from "./executor.js";
import { accessesOf } from "./hazards.js";
import { MemoryStore } from "./memory-store.js";

let nextId = 0;
const copy = (src: number, dst: number, nbytes: number, extra: Partial<MemoryParams>, name = "dma_read") =>
  ({
    id: nextId++,
    t_start: 0,
    t_end: 1,
    component_id: "sip0.cube0.pe0.pe_dma",
    op_kind: "memory",
    op_name: name,
    params: { src_addr: src, dst_addr: dst, nbytes, src_space: "hbm", dst_space: "tcm", ...extra },
    dependency_ids: [],
  }) as OpRecord;

const put = (store: MemoryStore, address: number, values: number[]) =>
  store.write(address, Tensor.fromArray(values, [values.length], "f32").bytes);
const get = (store: MemoryStore, address: number, n: number) => [
  ...new Tensor([n], "f32", store.read(address, n * 4)).toFloat64Array(),
];

describe("phase 2 of gathers and scatters (index_runs)", () => {
  it("a gather fills the tile with mask_fill, then copies each run from its source offset", () => {
    const store = new MemoryStore();
    put(store, 0, [10, 11, 12, 13, 14, 15, 16, 17]);
    // Tile [e5, e6, other, e1] (f32): runs [20 -> 0, 8 B] and [4 -> 12, 4 B]; other = -1.
    const fill = [...Tensor.fromArray([-1], [1], "f32").bytes];
    new DataExecutor(store).run([copy(0, 1024, 16, { index_runs: [20, 0, 8, 4, 12, 4], mask_fill: fill })]);
    expect(get(store, 1024, 4)).toEqual([15, 16, -1, 11]);
  });

  it("a scatter writes its runs in order: a later run over the same bytes wins", () => {
    const store = new MemoryStore();
    put(store, 1024, [1, 2, 3]);
    put(store, 0, [0, 0, 0, 0]);
    new DataExecutor(store).run([
      copy(1024, 0, 12, { index_runs: [0, 8, 4, 4, 0, 4, 8, 8, 4] }, "dma_write"),
    ]);
    expect(get(store, 0, 4)).toEqual([2, 0, 3, 0]);
  });

  it("its hazards span its runs on each side (a GEMM is not pulled past a gather it conflicts with)", () => {
    const access = accessesOf(copy(0, 1024, 8, { index_runs: [400, 0, 4, 40, 4, 4] }));
    expect(access.reads).toEqual([{ start: 40, end: 404 }]);
    expect(access.writes).toEqual([{ start: 1024, end: 1032 }]);
  });
});
