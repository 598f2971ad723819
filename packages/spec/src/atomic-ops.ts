import * as z from "zod";
import type { Dtype } from "./dtype.js";
import { integerType, wrapInteger } from "./integer-ops.js";

// Atomics (`tl.atomicAdd`, `atomicMax`, `atomicMin`, `atomicXchg`, `atomicCas`): the value a
// read-modify-write leaves at an address. One definition, used by phase 1 (tl) and phase 2 (the
// data executor), so both compute the same new value from the same old one.

/** The read-modify-write ops of an atomic (`DmaAtomic.op`, the op log's `atomic.op`). */
export const atomicOpSchema = z.enum(["add", "max", "min", "xchg", "cas"]);

/** One of the atomic ops (`tl.atomicAdd` is `add`, ...). */
export type AtomicOp = z.output<typeof atomicOpSchema>;

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

/**
 * {@link atomicResult} on exact integers (an `i64` / `u64` atomic, whose values a double would
 * round past 2^53): `add` wraps modulo 2^64 into the dtype's range.
 */
export function atomicResultExact(op: AtomicOp, dtype: Dtype, old: bigint, val: bigint, cmp: bigint): bigint {
  switch (op) {
    case "add": {
      const type = integerType(dtype);
      if (type === undefined) return old + val;
      return type.signed ? BigInt.asIntN(type.bits, old + val) : BigInt.asUintN(type.bits, old + val);
    }
    case "max":
      return old >= val ? old : val;
    case "min":
      return old <= val ? old : val;
    case "xchg":
      return val;
    case "cas":
      return old === cmp ? val : old;
  }
}
