import { atomicResult, atomicResultExact, type MemoryOpRecord } from "@kb/oplog";
import { DTYPE_BYTES, Tensor, tensorFromBigInts, toBigInts } from "@kb/tensor";
import type { MemoryStore } from "./memory-store.js";

// Phase 2 of an atomic (a `dma_write` record with `atomic`): the read-modify-writes of its
// `index_runs`, element by element in run order, each returning the old value into the `old_addr`
// tile. Records run in log order, which is the order the DES applied the atomics in, so both
// phases see the same old values. @internal

/** Replays the atomic `params` (with `index_runs` `runs`: `[tileOffset, deviceOffset, bytes, ...]`). */
export function atomicCopy(
  store: MemoryStore,
  params: MemoryOpRecord["params"],
  runs: readonly number[],
): void {
  const atomic = params.atomic;
  if (atomic === undefined) return;
  const { op, dtype, old_addr, cmp_addr } = atomic;
  const size = DTYPE_BYTES[dtype];
  const wide = dtype === "i64" || dtype === "u64";
  const element = (address: number) => store.readTensor(address, [1], dtype).toFloat64Array()[0] as number;
  // i64 / u64 exactly (a double rounds past 2^53).
  const exact = (address: number) => toBigInts(store.readTensor(address, [1], dtype))[0] as bigint;
  // Elements no run touches (masked off) return 0.
  store.write(old_addr, new Uint8Array(params.nbytes));
  for (let i = 0; i + 2 < runs.length; i += 3) {
    const tile = runs[i] as number;
    const device = params.dst_addr + (runs[i + 1] as number);
    for (let b = 0; b < (runs[i + 2] as number); b += size) {
      const at = device + b;
      if (wide) {
        const old = exact(at);
        const cmp = cmp_addr === undefined ? 0n : exact(cmp_addr + tile + b);
        const result = atomicResultExact(op, dtype, old, exact(params.src_addr + tile + b), cmp);
        store.writeTensor(at, tensorFromBigInts([result], [1], dtype));
        store.writeTensor(old_addr + tile + b, tensorFromBigInts([old], [1], dtype));
        continue;
      }
      const old = element(at);
      const val = element(params.src_addr + tile + b);
      const cmp = cmp_addr === undefined ? 0 : element(cmp_addr + tile + b);
      store.writeTensor(at, Tensor.fromArray([atomicResult(op, dtype, old, val, cmp)], [1], dtype));
      store.writeTensor(old_addr + tile + b, Tensor.fromArray([old], [1], dtype));
    }
  }
}
