import { integerType, wrapInteger } from "./integer-ops.js";
import type { AtomicOp, Dtype } from "./schema.js";

// Atomics (`tl.atomicAdd`, `atomicMax`, `atomicMin`, `atomicXchg`, `atomicCas`): the value a
// read-modify-write leaves at an address. One definition, used by phase 1 (tl) and phase 2 (the
// data executor), so both compute the same new value from the same old one.

/**
 * The value atomic `op` writes over `old` with operand `val` (and `cmp` for `cas`), before it is
 * stored in `dtype` (a float sum rounds when stored; an integer sum wraps modulo 2^bits, as
 * Triton's). `max` / `min` of a NaN is NaN; `cas` writes `val` only when `old === cmp`.
 */
export function atomicResult(op: AtomicOp, dtype: Dtype, old: number, val: number, cmp: number): number {
  switch (op) {
    case "add": {
      const type = integerType(dtype);
      return type === undefined ? old + val : wrapInteger(old + val, type);
    }
    case "max":
      return Math.max(old, val);
    case "min":
      return Math.min(old, val);
    case "xchg":
      return val;
    case "cas":
      return old === cmp ? val : old;
  }
}
