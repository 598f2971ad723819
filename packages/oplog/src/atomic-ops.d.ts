import type { AtomicOp, Dtype } from "./schema.js";
/**
 * The value atomic `op` writes over `old` with operand `val` (and `cmp` for `cas`), before it is
 * stored in `dtype` (a float sum rounds when stored; an integer sum wraps modulo 2^bits, as
 * Triton's). `max` / `min` of a NaN is NaN; `cas` writes `val` only when `old === cmp`.
 */
export declare function atomicResult(op: AtomicOp, dtype: Dtype, old: number, val: number, cmp: number): number;
