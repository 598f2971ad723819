import { type AtomicOp, atomicResult, atomicResultExact, type DmaCommand } from "@kb/spec";
import {
  DTYPE_BYTES,
  type Dtype,
  formatShape,
  isDtype,
  Tensor,
  tensorFromBigInts,
  toBigInts,
} from "@kb/tensor";
import type { CallScope } from "./call-scope.js";
import { hex, mistypedPointer, readMemory, writeMemory } from "./device-access.js";
import { checkIndexedAccess, type IndexedBlock, indexedBlock, indexedCommand } from "./gather.js";
import type { TensorHandle } from "./handles.js";
import { pendingIn } from "./kernel-memory.js";
import type { Pointer } from "./options.js";
import { checkOwned, pointerAddress } from "./validate.js";
import { valuesOf } from "./values.js";

// The bodies of Triton's atomics (`tl.atomicAdd`, `atomicMax`, `atomicMin`, `atomicXchg`,
// `atomicCas`; atomic-calls.ts documents the calls): one PE_DMA atomic command (DmaCommand.atomic)
// whose elements are read-modify-writes at the memory, serialised per address. Phase 1 applies them
// when the command completes, in the order the DES applied them (the op log's), when it knows the
// operand and the memory's bytes; else it marks them pending and phase 2 computes them.

/** `tl.full` (a constant tile). */
export type Full = (shape: readonly number[], value: number | bigint, dtype: Dtype) => TensorHandle;

/** Triton's memory orders (`sem`): every one accepted; all atomics are sequentially consistent. */
export const ATOMIC_SEMS = ["acq_rel", "acquire", "release", "relaxed"] as const;
/** Triton's scopes (`scope`): every one accepted; an atomic is visible to every PE once applied. */
export const ATOMIC_SCOPES = ["gpu", "cta", "sys"] as const;

/** Options of the atomics: Triton's `mask`, `sem` and `scope`, and `offsets` for a tensor of addresses. */
export interface AtomicOptions {
  /**
   * Element offsets from the pointer (an integer tile of the operand's shape, Triton's
   * `ptr + offs`), known in phase 1 as a gather's. Without it the operand's tile is contiguous at
   * the pointer.
   */
  readonly offsets?: TensorHandle;
  /** Triton's `mask` (an `i1` tile): masked-off elements are not touched and return 0. Needs `offsets`. */
  readonly mask?: TensorHandle;
  /** Triton's memory order; accepted, no effect: every atomic is sequentially consistent in simulated time. */
  readonly sem?: (typeof ATOMIC_SEMS)[number];
  /** Triton's scope; accepted, no effect: one memory, every PE sees an atomic once it wrote. */
  readonly scope?: (typeof ATOMIC_SCOPES)[number];
}

/**
 * `tl.atomic${name}(ptr, val, options)` (and `cmp` for `cas`): issues the atomic, waits for it and
 * returns the tile of old values (the operand's shape and dtype). A number `val` is a tile of the
 * offsets' shape (`[1]` without offsets) of the pointer's dtype.
 */
export async function runAtomic(
  scope: CallScope,
  call: string,
  op: AtomicOp,
  ptr: Pointer,
  value: TensorHandle | number | bigint,
  cmp: TensorHandle | number | bigint | null,
  options: AtomicOptions,
  full: Full,
  site: string | null,
): Promise<TensorHandle> {
  const tl = scope.tl;
  checkOptions(scope, call, options);
  const val = operand(scope, call, ptr, value, options, null, full);
  const compared = cmp === null ? null : operand(scope, call, ptr, cmp, options, val, full);
  const { shape, dtype } = val;
  if (op !== "xchg" && op !== "cas" && (dtype === "i1" || dtype === "i8")) {
    throw tl._error(
      "TL_INVALID_CALL",
      `tl.${call} of ${dtype} elements: Triton's atomics take 16-bit and wider elements (f16, bf16, f32, i32, u32).`,
    );
  }
  const t = mistypedPointer(ptr, dtype);
  if (t !== null)
    throw tl._error(
      "TL_INVALID_CALL",
      `tl.${call} of ${val.describe()} into ${t}: cast the operand to ${t.dtype} first (tl.cast).`,
    );
  const base = pointerAddress(tl, ptr, call);
  const size = DTYPE_BYTES[dtype];
  const block = blockOf(scope, call, options, shape, dtype);
  const memory = tl.memory;
  checkIndexedAccess(tl, memory, call, base, block, size);
  const source = await scope.inTcm(call, val);
  const cmpTile = compared === null ? null : await scope.inTcm(call, compared);
  const old = scope.scratchHandle(call, "load", shape, dtype);
  const command: DmaCommand = {
    kind: "dma",
    src: source.address,
    dst: base,
    bytes: block.tileBytes,
    indexed: indexedCommand(block, false),
    atomic: { op, dtype, old: old.address, ...(cmpTile === null ? {} : { cmp: cmpTile.address }) },
  };
  await scope.dispatch();
  await scope.issue(command);
  if (memory !== null) {
    const operands = [valuesOf(tl, source), cmpTile === null ? null : valuesOf(tl, cmpTile)];
    const known =
      operands[0] !== null &&
      (cmpTile === null || operands[1] !== null) &&
      !runsPending(block, (at, n) => pendingIn(memory, base + at, n));
    if (!known) {
      for (let i = 0; i < block.runs.length; i += 3)
        memory.markPending?.(base + (block.runs[i] as number), block.runs[i + 2] as number);
      memory.markPending?.(old.address, block.tileBytes);
    } else {
      // i64 / u64 exactly, as BigInts (a double rounds past 2^53); every other dtype as f64.
      const wide = dtype === "i64" || dtype === "u64";
      // Float64Arrays for the rest, never plain arrays: V8 canonicalises a NaN stored in an array
      // (its sign bit lost), and phase 2 keeps the NaN's bits.
      type Values = { [i: number]: number | bigint; readonly length: number };
      const read = (t: Tensor): Values => (wide ? toBigInts(t) : t.toFloat64Array());
      const encode = (values: Values, at: readonly number[]) =>
        wide
          ? tensorFromBigInts(values as ArrayLike<bigint>, at, dtype)
          : Tensor.fromArray(values as ArrayLike<number>, at, dtype);
      const vals = read(operands[0] as Tensor);
      const cmps = operands[1] === null || operands[1] === undefined ? null : read(operands[1]);
      const olds: Values = wide ? new Array<bigint>(vals.length).fill(0n) : new Float64Array(vals.length);
      const what = `tl.${call} at ${hex(base)}`;
      for (let i = 0; i < block.runs.length; i += 3) {
        const device = base + (block.runs[i] as number);
        const first = (block.runs[i + 1] as number) / size;
        for (let k = 0; k < (block.runs[i + 2] as number) / size; k++) {
          const at = device + k * size;
          const before = read(new Tensor([1], dtype, readMemory(tl, memory, at, size, what)))[0] as
            | number
            | bigint;
          const e = first + k;
          const after = wide
            ? atomicResultExact(op, dtype, before as bigint, vals[e] as bigint, (cmps?.[e] ?? 0n) as bigint)
            : atomicResult(op, dtype, before as number, vals[e] as number, (cmps?.[e] ?? 0) as number);
          writeMemory(tl, memory, at, encode([after], [1]).bytes, what);
          olds[e] = before;
        }
      }
      const bytes = encode(olds, shape).bytes;
      writeMemory(tl, memory, old.address, bytes, `tl.${call} old values`);
      // --check-phases compares the old values with the ones phase 2 returns.
      memory.observeLoad?.({
        kernel: tl.kernel,
        pe: tl.placement.pe,
        site,
        src: base,
        dst: old.address,
        rows: 1,
        rowBytes: block.tileBytes,
        srcStride: block.tileBytes,
        bytes,
        atNs: scope.sink.now() ?? 0,
      });
    }
  }
  return old;
}

function runsPending(block: IndexedBlock, pending: (at: number, bytes: number) => boolean): boolean {
  for (let i = 0; i < block.runs.length; i += 3)
    if (pending(block.runs[i] as number, block.runs[i + 2] as number)) return true;
  return false;
}

function checkOptions(scope: CallScope, call: string, options: AtomicOptions): void {
  const tl = scope.tl;
  if (options.sem !== undefined && !(ATOMIC_SEMS as readonly string[]).includes(options.sem))
    throw tl._error(
      "TL_INVALID_CALL",
      `tl.${call}: sem "${options.sem}" is not one of Triton's: ${ATOMIC_SEMS.join(", ")}.`,
    );
  if (options.scope !== undefined && !(ATOMIC_SCOPES as readonly string[]).includes(options.scope))
    throw tl._error(
      "TL_INVALID_CALL",
      `tl.${call}: scope "${options.scope}" is not one of Triton's: ${ATOMIC_SCOPES.join(", ")}.`,
    );
  if (options.mask !== undefined && options.offsets === undefined)
    throw tl._error(
      "TL_INVALID_CALL",
      `tl.${call}: a mask goes with offsets (Triton's ptr + offs): pass { offsets: tl.arange(0, n), mask }.`,
    );
}

/** The operand tile of `value` (a number becomes a constant tile), checked against `like` (cas's val). */
function operand(
  scope: CallScope,
  call: string,
  ptr: Pointer,
  value: TensorHandle | number | bigint,
  options: AtomicOptions,
  like: TensorHandle | null,
  full: Full,
): TensorHandle {
  const tl = scope.tl;
  let handle: TensorHandle;
  if (typeof value === "number" || typeof value === "bigint") {
    const dtype: Dtype | undefined =
      like?.dtype ?? (typeof ptr === "object" && isDtype(ptr.dtype) ? ptr.dtype : undefined);
    if (dtype === undefined)
      throw tl._error(
        "TL_INVALID_CALL",
        `tl.${call}(${hex(typeof ptr === "number" ? ptr : ptr.address)}, ${value}): a number operand needs a typed pointer (a device tensor) to take its dtype; or pass a tile: tl.full([1], ${value}, "f32").`,
      );
    handle = full(like?.shape ?? options.offsets?.shape ?? [1], value, dtype);
  } else {
    checkOwned(tl, call, value);
    handle = value;
  }
  if (like !== null && (formatShape(like.shape) !== formatShape(handle.shape) || like.dtype !== handle.dtype))
    throw tl._error(
      "TL_INVALID_CALL",
      `tl.${call}: cmp ${handle.describe()} and val ${like.describe()} must have one shape and dtype.`,
    );
  return handle;
}

/** The elements the atomic touches: through `offsets`, or the contiguous tile at the pointer. */
function blockOf(
  scope: CallScope,
  call: string,
  options: AtomicOptions,
  shape: readonly number[],
  dtype: Dtype,
): IndexedBlock {
  if (options.offsets !== undefined)
    return indexedBlock(scope.tl, call, options.offsets, options.mask, null, shape, dtype);
  const tileBytes = shape.reduce((a, b) => a * b, 1) * DTYPE_BYTES[dtype];
  return { runs: [0, 0, tileBytes], firstElements: [0], fill: undefined, tileBytes };
}
