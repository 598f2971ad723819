import { type Dtype, invalid, roundTo } from "./dtype.js";
import { integerBinary, wraps } from "./integer.js";
import { type RefTensor, tensor } from "./tensor.js";

// Atomics (packages/tl/README.md, "Memory, constants and views": `atomicAdd`, `atomicMax`,
// `atomicMin`, `atomicXchg`, `atomicCas` and "atomics' order"), over a device tensor held as its
// elements in row-major order. One call is applied whole: its elements in row-major order, each
// seeing the writes of the elements before it.

/** The read-modify-write of each atomic. */
export const ATOMIC_OPS = ["add", "max", "min", "xchg", "cas"] as const;
export type AtomicOp = (typeof ATOMIC_OPS)[number];

/** `f(old, val)` of `op` (cas: `val` if `old == cmp`, else `old`), rounded to `dtype`. */
function apply(op: AtomicOp, dtype: Dtype, old: number, val: number, cmp: number): number {
  switch (op) {
    case "add":
      // Integers wrap modulo 2^bits; floats are summed exactly and rounded once.
      return wraps(dtype) ? integerBinary("add", dtype, old, val) : roundTo(dtype, old + val);
    case "max":
      return Math.max(old, val); // NaN when either is NaN
    case "min":
      return Math.min(old, val);
    case "xchg":
      return val;
    case "cas":
      return old === cmp ? val : old; // NaN equals nothing; 0 equals -0
  }
}

/**
 * `tl.atomic<op>(base, val, { offsets, mask })` (and `cmp` for cas) where `base` is element 0 of
 * `memory` (of `dtype`): for `i` in row-major order where `mask[i]` is 1 (every `i` without a
 * mask), `old[i] = memory[offsets[i]]`, then `memory[offsets[i]] = f(old[i], val[i])`. Returns
 * `old` (0 where the mask is 0), of `val`'s shape and dtype. `offsets`, `mask` and `cmp` have
 * `val`'s shape.
 */
export function atomic(
  op: AtomicOp,
  memory: Float64Array,
  dtype: Dtype,
  val: RefTensor,
  offsets: RefTensor,
  mask: RefTensor | null = null,
  cmp: RefTensor | null = null,
): RefTensor {
  if (val.dtype !== dtype)
    throw invalid(`atomic ${op}`, `val is ${val.dtype}, the memory ${dtype}: cast it first.`);
  const old = new Float64Array(val.data.length);
  offsets.data.forEach((offset, i) => {
    if (mask !== null && mask.data[i] === 0) return;
    if (!Number.isInteger(offset) || offset < 0 || offset >= memory.length)
      throw invalid(
        `atomic ${op}`,
        `offset ${offset} of element ${i} is outside the ${memory.length} elements.`,
      );
    const before = memory[offset] as number;
    old[i] = before;
    memory[offset] = apply(op, dtype, before, val.data[i] as number, cmp?.data[i] ?? 0);
  });
  return tensor(old, val.shape, dtype);
}
