import { type MathCommand, type MathScalar, mathScalar, type PeCommand } from "@kb/spec";
import { type Dtype, type Tensor, toBigInts } from "@kb/tensor";
import { type MemoryScope, writeMemory } from "./device-access.js";
import type { HandleInit, HandleOrigin, TensorHandle } from "./handles.js";
import type { CommandSink, KernelPlacement } from "./options.js";
import { Scratch } from "./scratch.js";
import { checkInTcm, checkOut } from "./validate.js";

/** What a scope needs of its context: located errors, the memory, and which kernel instance it is. */
export interface ScopeOwner extends MemoryScope {
  readonly kernel: string;
  readonly placement: KernelPlacement;
  readonly dispatchCycles: number;
}

/** Where a loaded tile came from: its device address and, when strided, its row stride in elements. */
export interface LoadSource {
  readonly address: number;
  readonly stride: number | null;
}

/**
 * What the tl calls of one kernel instance share below the API (context.ts): the command sink
 * with the dispatch cost, and the handles the calls make, with the TCM scratch under them. A
 * handle names its context (`handle.tl`), so the context hands in how to make one (`newHandle`):
 * this module never imports the context.
 */
export class CallScope {
  readonly scratch: Scratch;
  private nextHandle = 0;

  /**
   * `scratch` is the PE's TCM range for outputs (`TLOptions.scratch`); throws `TL_INVALID_CALL`
   * when it is not whole bytes or does not fit the PE's TCM window.
   */
  constructor(
    /** The context: errors, memory, kernel and placement. */
    readonly tl: ScopeOwner,
    readonly sink: CommandSink,
    scratch: { readonly offset: number; readonly bytes: number },
    private readonly newHandle: (init: HandleInit) => TensorHandle,
  ) {
    this.scratch = new Scratch(tl.placement, scratch);
  }

  /** Charges the PE_CPU's dispatch cycles (ADR-0046 D6) before a call's command, if any. */
  async dispatch(): Promise<void> {
    if (this.tl.dispatchCycles > 0) await this.issue({ kind: "cycles", cycles: this.tl.dispatchCycles });
  }

  /** Issues `command` and waits until the PE_CPU is done with it. */
  async issue(command: PeCommand): Promise<void> {
    await this.sink.issue(command).done;
  }

  /** A new handle of this kernel instance (tracked by the scratch when it lies on scratch). */
  handle(init: Omit<HandleInit, "id">): TensorHandle {
    const handle = this.newHandle({ ...init, id: this.nextHandle++ });
    if (handle.scratchOffset !== null) this.scratch.track(handle);
    return handle;
  }

  /** A handle on fresh scratch for `dtype` elements of `shape` (`TL_SCRATCH_OVERFLOW` when full). */
  scratchHandle(
    op: string,
    origin: HandleOrigin,
    shape: readonly number[],
    dtype: Dtype,
    from: LoadSource | null = null,
  ): TensorHandle {
    const offset = this.scratch.allocate(this.tl, op, shape, dtype);
    return this.handle({
      op,
      origin,
      shape,
      dtype,
      space: "tcm",
      address: this.scratch.base + offset,
      source: from?.address ?? null,
      sourceStride: from?.stride ?? null,
      scratchOffset: offset,
    });
  }

  /**
   * A handle for a result written into `out` (the `out` option of loads and math ops): checks
   * `out` is this kernel's plain TCM tensor of the result's shape and dtype, and names its bytes.
   */
  async into(
    op: string,
    out: TensorHandle,
    origin: HandleOrigin,
    shape: readonly number[],
    dtype: Dtype,
    from: LoadSource | null = null,
  ): Promise<TensorHandle> {
    checkOut(this.tl, op, out, shape, dtype);
    // The bytes now hold the result: a constant must never be written over them later. Writing
    // part of a constant (through a view) writes the rest of it first.
    if (out._root !== null && out._root.origin === "constant" && !out._root._materialised)
      await this.materialise(out._root);
    out._materialised = true;
    const handle = this.handle({
      op,
      origin,
      shape,
      dtype,
      space: "tcm",
      address: out.address,
      source: from?.address ?? null,
      sourceStride: from?.stride ?? null,
      scratchOffset: out.scratchOffset,
    });
    handle._root = out._root;
    return handle;
  }

  /**
   * The TCM form of an operand (checked by `checkInTcm`): writes a constant's values first (a
   * PE_MATH fill/iota).
   */
  async inTcm(call: string, handle: TensorHandle, transposedOk = false): Promise<TensorHandle> {
    checkInTcm(this.tl, call, handle, transposedOk);
    const root = handle._root ?? handle;
    if (root.origin === "constant" && !root._materialised && !handle._materialised)
      await this.materialise(root);
    return handle;
  }

  private async materialise(handle: TensorHandle): Promise<void> {
    const data = handle._data as Tensor;
    const iota = handle.op === "arange";
    const command: MathCommand = {
      kind: "math",
      op: iota ? "iota" : "fill",
      inputs: [],
      shape: [...handle.shape],
      out: handle.address,
      dtype: handle.dtype,
      scalars: [data.size > 0 ? firstScalar(data) : 0],
    };
    await this.dispatch();
    await this.issue(command);
    handle._materialised = true;
    const memory = this.tl.memory;
    if (memory !== null) writeMemory(this.tl, memory, handle.address, data.bytes, `tl.${handle.op} in TCM`);
  }
}

/** A constant's first element as the fill's (or iota's start) scalar: exact for a 64-bit integer. */
function firstScalar(data: Tensor): MathScalar {
  return data.dtype === "i64" || data.dtype === "u64"
    ? mathScalar(toBigInts(data)[0] as bigint)
    : data.getFlat(0);
}
