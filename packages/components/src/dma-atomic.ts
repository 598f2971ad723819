import { type DmaAtomic, type DmaCommand, DTYPE_BYTES, indexedRuns, indexedRunsProblem } from "@kb/spec";
import type { DmaCopy } from "./message.js";
import {
  block,
  type Feed,
  invalid,
  memoryOp,
  ownTcm,
  type PeEngines,
  singleFeed,
  stage,
} from "./plan-support.js";

// Atomics (`DmaCommand.atomic`, `tl.atomicAdd` ...): one PE_DMA write-lane stage whose pieces are
// the indexed runs, each element read, combined by the memory controller's ALU and written (the
// formula in docs/latency-model.md, "Atomics"), and one `dma_write` op record with `atomic` that
// phase 2 replays as read-modify-writes in log order.

/**
 * The feed of an atomic `command` (`copy` is its whole tile): checks it (TCM -> HBM/SRAM, rows 1,
 * no mask, runs whole elements, `old` and `cas`'s `cmp` in this PE's TCM).
 */
export function atomicFeed(
  id: string,
  where: string,
  command: DmaCommand,
  engines: PeEngines,
  copy: DmaCopy,
  atomic: DmaAtomic,
): Feed {
  const indexed = command.indexed;
  if (indexed === undefined || (command.rows ?? 1) !== 1 || command.mask !== undefined)
    throw invalid(
      where,
      "an atomic has indexed runs, rows 1 and no mask: its runs say which elements change.",
    );
  const problem = indexedRunsProblem(indexed.runs, command.bytes, false);
  if (problem !== null) throw invalid(where, problem);
  const size = DTYPE_BYTES[atomic.dtype];
  ownTcm(where, engines, atomic.old, "atomic.old");
  if ((atomic.op === "cas") !== (atomic.cmp !== undefined))
    throw invalid(where, "atomic.cmp is the compared tile of a cas, and only of a cas.");
  if (atomic.cmp !== undefined) ownTcm(where, engines, atomic.cmp, "atomic.cmp");
  const runs = indexedRuns(indexed.runs);
  const addresses: number[] = [];
  for (const run of runs) {
    if (run.bytes % size !== 0 || run.srcOffset % size !== 0)
      throw invalid(where, `atomic runs are whole ${atomic.dtype} elements (${size} B each).`);
    for (let b = 0; b < run.bytes; b += size) addresses.push(command.dst + run.dstOffset + b);
  }
  const pieces = runs.map((run) => ({
    src: block(command.src + run.srcOffset, 1, run.bytes, run.bytes),
    dst: block(command.dst + run.dstOffset, 1, run.bytes, run.bytes),
  }));
  const op = memoryOp("dma_write", copy, undefined, indexed);
  const params = {
    ...op.params,
    atomic: {
      op: atomic.op,
      dtype: atomic.dtype,
      old_addr: atomic.old,
      ...(atomic.cmp === undefined ? {} : { cmp_addr: atomic.cmp }),
    },
  };
  const stageParams = {
    type: "dma_write" as const,
    copies: pieces,
    atomic: { addresses, elementBytes: size },
  };
  return singleFeed(id, (index) => ({
    tileId: index,
    stages: [stage("dma_write", engines.dma, stageParams, [{ ...op, params }])],
  }));
}
