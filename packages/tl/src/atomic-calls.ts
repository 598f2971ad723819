import type { AtomicOp } from "@kb/spec";
import type { Dtype } from "@kb/tensor";
import { type AtomicOptions, runAtomic } from "./atomics.js";
import type { TLContext } from "./context.js";
import type { TensorHandle } from "./handles.js";
import { siteOf } from "./movement.js";
import type { Pointer } from "./options.js";

// Triton's atomics (`tl.atomic_add` ... as `tl.atomicAdd` ...). Their work is in atomics.ts.

/** Triton's atomics (installed on `TLContext` by context.ts). */
export interface AtomicCalls {
  /**
   * Triton's `tl.atomic_add(ptr + offs, val, mask)`: for each element of `val` (a tile, or a
   * number as a tile of the pointer's dtype), atomically `*p = *p + v` at `ptr + offsets[i]`
   * (`offsets` in elements, as a gather's; without it the tile is contiguous at `ptr`); returns
   * the tile of old values. One PE_DMA read-modify-write at the memory, serialised per address
   * (docs/latency-model.md, "Atomics"); integer sums wrap.
   */
  atomicAdd(
    ptr: Pointer,
    val: TensorHandle | number | bigint,
    options?: AtomicOptions,
  ): Promise<TensorHandle>;
  /** Triton's `tl.atomic_max`: `*p = max(*p, v)`, returning the old values (as `atomicAdd`). */
  atomicMax(
    ptr: Pointer,
    val: TensorHandle | number | bigint,
    options?: AtomicOptions,
  ): Promise<TensorHandle>;
  /** Triton's `tl.atomic_min`: `*p = min(*p, v)`, returning the old values (as `atomicAdd`). */
  atomicMin(
    ptr: Pointer,
    val: TensorHandle | number | bigint,
    options?: AtomicOptions,
  ): Promise<TensorHandle>;
  /** Triton's `tl.atomic_xchg`: `*p = v`, returning the old values (as `atomicAdd`). */
  atomicXchg(
    ptr: Pointer,
    val: TensorHandle | number | bigint,
    options?: AtomicOptions,
  ): Promise<TensorHandle>;
  /**
   * Triton's `tl.atomic_cas(ptr, cmp, val)`: `*p = *p == c ? v : *p`, returning the old values
   * (`cmp` and `val` of one shape and dtype; as `atomicAdd`).
   */
  atomicCas(
    ptr: Pointer,
    cmp: TensorHandle | number | bigint,
    val: TensorHandle | number | bigint,
    options?: AtomicOptions,
  ): Promise<TensorHandle>;
}

function atomic(
  tl: TLContext,
  call: string,
  op: AtomicOp,
  ptr: Pointer,
  val: TensorHandle | number | bigint,
  cmp: TensorHandle | number | bigint | null,
  options: AtomicOptions,
): Promise<TensorHandle> {
  const full = (shape: readonly number[], value: number | bigint, dtype: Dtype) =>
    tl.full(shape, value, dtype);
  return tl._call(call, (site) => runAtomic(tl._scope, call, op, ptr, val, cmp, options, full, siteOf(site)));
}

export const atomicCalls: AtomicCalls & ThisType<TLContext> = {
  atomicAdd(ptr, val, options = {}) {
    return atomic(this, "atomicAdd", "add", ptr, val, null, options);
  },
  atomicMax(ptr, val, options = {}) {
    return atomic(this, "atomicMax", "max", ptr, val, null, options);
  },
  atomicMin(ptr, val, options = {}) {
    return atomic(this, "atomicMin", "min", ptr, val, null, options);
  },
  atomicXchg(ptr, val, options = {}) {
    return atomic(this, "atomicXchg", "xchg", ptr, val, null, options);
  },
  atomicCas(ptr, cmp, val, options = {}) {
    // The val operand first: cmp takes its shape and dtype.
    return atomic(this, "atomicCas", "cas", ptr, val, cmp, options);
  },
};
