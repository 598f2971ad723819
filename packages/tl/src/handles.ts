import type { KbError } from "@kb/errors";
import { DTYPE_BYTES, type Dtype, formatShape, shapeSize, type Tensor } from "@kb/tensor";
import type { CallSite } from "./call-site.js";
import type { TLContext } from "./context.js";

/**
 * The call that took a handle's value away: the `tl.dot` whose result took the accumulator's
 * bytes, or the `tl.scratchRelease` that freed its scratch.
 */
export interface Consumption {
  readonly how: "accumulator" | "released";
  readonly site: CallSite;
}

/** Where a handle's bytes are: a PE's TCM, or HBM/SRAM (a `tl.ref`, the source of a `tl.load`). */
export type HandleSpace = "tcm" | "hbm";

/** How a handle came to be; decides whether it may carry data in phase 1. */
export type HandleOrigin =
  /** `tl.ref`: a reference to device memory, no bytes moved. */
  | "ref"
  /** `tl.load`: real bytes in runner mode. */
  | "load"
  /** `tl.zeros`, `tl.full`, `tl.arange`: known values, materialised in TCM on first use. */
  | "constant"
  /** A compute result (`tl.dot`, math ops, reductions): pending for the whole of phase 1. */
  | "compute"
  /** `tl.recv`: an IPCQ payload. */
  | "recv";

/** @internal Fields a TLContext sets when it makes a handle. */
export interface HandleInit {
  readonly id: number;
  readonly op: string;
  readonly origin: HandleOrigin;
  readonly shape: readonly number[];
  readonly dtype: Dtype;
  readonly space: HandleSpace;
  /** Device address of the first element (TCM scratch, or HBM for refs). */
  readonly address: number;
  /** Where a loaded tile came from (HBM), so a composite can stream it again. */
  readonly source?: number | null;
  /** Elements between the rows of `source` when the load was strided (not contiguous rows). */
  readonly sourceStride?: number | null;
  /** Row stride in elements of a 2-D view (default: the last dimension, contiguous). */
  readonly rowStride?: number;
  /** Last two dimensions swapped without moving bytes (`tl.trans`). */
  readonly transposed?: boolean;
  /** Scratch offset the handle was allocated at (released with `scratchRelease`). */
  readonly scratchOffset?: number | null;
}

/**
 * A tensor as a kernel sees it (ADR-0046): shape, dtype, where it lives, and in runner mode the
 * real data of `tl.load` results. Compute results are *pending* in phase 1: reading `data`
 * throws `TL_PENDING_HANDLE` naming the op. There is no operator overloading in TypeScript, so
 * `a + b` is `await tl.add(a, b)` or `await a.add(b)`.
 */
export class TensorHandle {
  readonly id: number;
  /** The tl call that made it (`load`, `dot`, `exp`, ...). */
  readonly op: string;
  readonly origin: HandleOrigin;
  readonly shape: readonly number[];
  readonly dtype: Dtype;
  readonly space: HandleSpace;
  readonly address: number;
  readonly source: number | null;
  /** @internal Row stride of a strided load's source, in elements (null: contiguous). */
  readonly sourceStride: number | null;
  readonly rowStride: number;
  readonly transposed: boolean;
  /** @internal */
  readonly scratchOffset: number | null;
  /** @internal The context that made it. */
  readonly tl: TLContext;
  /** @internal Real values (loads in runner mode, constants). */
  _data: Tensor | null = null;
  /** @internal A constant already written to its TCM bytes. */
  _materialised = false;
  /** @internal Its scratch was released: using it is an error. */
  _released = false;
  /** @internal What took its value away (a dot's accumulator, a release), or null: using it is an error. */
  _consumedBy: Consumption | null = null;
  /** @internal The tensor whose bytes this one names part of (`tl.view`, writes through `out`). */
  _root: TensorHandle | null = null;

  /** @internal Made by TLContext. */
  constructor(tl: TLContext, init: HandleInit) {
    this.tl = tl;
    this.id = init.id;
    this.op = init.op;
    this.origin = init.origin;
    this.shape = Object.freeze([...init.shape]);
    this.dtype = init.dtype;
    this.space = init.space;
    this.address = init.address;
    this.source = init.source ?? null;
    this.sourceStride = init.sourceStride ?? null;
    this.rowStride = init.rowStride ?? init.shape[init.shape.length - 1] ?? 1;
    this.transposed = init.transposed ?? false;
    this.scratchOffset = init.scratchOffset ?? null;
  }

  /** Elements. */
  get size(): number {
    return shapeSize(this.shape);
  }

  /** Bytes of the elements (contiguous). */
  get nbytes(): number {
    return this.size * DTYPE_BYTES[this.dtype];
  }

  /**
   * True when phase 1 does not know the values: a compute result, data loaded from bytes a
   * compute result wrote, a receive of such data, `tl.empty` not written yet, a ref, or any
   * handle in command-list mode. Their values exist only in phase 2.
   */
  get pending(): boolean {
    return this.tl._valuesOf(this) === null;
  }

  /**
   * The values as phase 1 knows them: loaded, received and constant data in runner mode (the
   * bytes at the handle's TCM address now: a write through another view of the same tensor is
   * seen). Throws `TL_PENDING_HANDLE` when they exist only in phase 2 (see {@link pending}),
   * naming why, and `TL_INVALID_CALL` for a handle released by `tl.scratchRelease`.
   */
  get data(): Tensor {
    return this.tl._located("data", this.readData, this, []);
  }

  private readData(): Tensor {
    const consumed = this._consumedText(`${this.describe()}.data`);
    if (consumed !== null) throw this.tl._error("TL_INVALID_CALL", consumed);
    const loading = this._inFlightLoad();
    if (loading !== null)
      throw this.tl._error("TL_INVALID_CALL", loading._usedTooEarly(`${this.describe()}.data`));
    const values = this.tl._valuesOf(this);
    if (values !== null) return values;
    const what = `${this.describe()} from tl.${this.op}`;
    const hostData =
      this.origin === "load" && this.source !== null
        ? (this.tl.memory?.describePending?.(this.source) ?? null)
        : null;
    const detail =
      hostData !== null
        ? `${what} holds ${hostData}`
        : this.op === "empty"
          ? `${what} holds no values: write it first (a load, a receive or a math op with { out }).`
          : this.origin === "compute"
            ? `${what} is pending: compute results exist only in phase 2 (kb run --verify), so a kernel cannot read them or branch on them. Branch on the data of tl.load instead, or move the decision to the host.`
            : this.origin === "ref"
              ? `${what} references device memory without loading it; use tl.load to read its values.`
              : this.tl.memory === null
                ? `${what} carries no data: command-list mode runs kernels without the memory store. Run the kernel on the simulator (runner mode) to read loaded values.`
                : this.origin === "recv"
                  ? `${what} carries a payload the sender had not computed in phase 1 (a pending compute result); its values exist only in phase 2.`
                  : `${what} holds bytes a compute result wrote in phase 1 (a tl.store of a pending tile, a composite's output, or a math op into this buffer); its values exist only in phase 2, so a kernel cannot branch on them. Branch on data the host wrote, or split the work into two launches and read the first one's results on the host after phase 2.`;
    throw this.tl._error("TL_PENDING_HANDLE", detail);
  }

  /**
   * @internal The `tl.loadAsync` still in flight (not waited for) whose destination overlaps this
   * handle's bytes, or null. The PE does not order a command after a DMA that writes the TCM it
   * reads or writes, so such a handle may not be used before `tl.wait`.
   */
  _inFlightLoad(): LoadFuture | null {
    for (const pending of this.tl._outstanding) {
      if (pending instanceof LoadFuture && pending._overlaps(this.address, this.nbytes)) return pending;
    }
    return null;
  }

  /**
   * @internal Why `use` (`tl.exp: handle #3 ...`, `handle #3 ....data`) may not read this handle,
   * or null when it may: the dot that consumed it (or the tensor it is a view or reshape of) as its
   * accumulator, or the scratch release that freed it, with their lines.
   */
  _consumedText(use: string): string | null {
    const by = this._consumedBy ?? this._root?._consumedBy ?? null;
    if (by === null && !this._released) return null;
    const what = use.startsWith("tl.") ? `${use}: ${this.describe()} from tl.${this.op}` : use;
    if (by === null || by.how === "released")
      return `${what} was released by ${by === null ? "tl.scratchRelease" : by.site.describe()}; its TCM may hold other data now. Release scratch after the last use of its tiles (tl.scratchRelease at the end of the loop body), or make the tiles you keep before tl.scratchMark.`;
    const call = by.site.describe();
    const itself = by === this._consumedBy ? "" : " (through the tensor it names)";
    return `${what} is the accumulator of ${call}, which took its bytes${itself}: it names no value any more. Like Triton's tl.dot, the accumulator is consumed: use the handle tl.dot returned (\`acc = await tl.dot(a, b, acc)\`).`;
  }

  /** `handle #3 (f16 [64, 64] in tcm)`. */
  describe(): string {
    return `handle #${this.id} (${this.dtype} ${formatShape(this.shape)} in ${this.space})`;
  }

  toString(): string {
    return `TensorHandle(${this.op} ${this.dtype} ${formatShape(this.shape)})`;
  }

  /** `await tl.add(this, other)`. */
  add(other: TensorHandle | number): Promise<TensorHandle> {
    return this.tl.add(this, other);
  }
  /** `await tl.sub(this, other)`. */
  sub(other: TensorHandle | number): Promise<TensorHandle> {
    return this.tl.sub(this, other);
  }
  /** `await tl.mul(this, other)`. */
  mul(other: TensorHandle | number): Promise<TensorHandle> {
    return this.tl.mul(this, other);
  }
  /** `await tl.div(this, other)`. */
  div(other: TensorHandle | number): Promise<TensorHandle> {
    return this.tl.div(this, other);
  }
  /** `await tl.cast(this, dtype)` (Triton's `x.to(dtype)`). */
  to(dtype: Dtype): Promise<TensorHandle> {
    return this.tl.cast(this, dtype);
  }
}

/** What `tl.composite` returns: wait for it with `tl.wait(handle)` (timing only). */
export class CompletionHandle {
  /** @internal */
  constructor(
    readonly id: number,
    /** `gemm` or `math`. */
    readonly op: string,
    /** @internal Position of the async command in the kernel's program. */
    readonly commandIndex: number,
    /** @internal */
    readonly tl: TLContext,
  ) {}

  /** @internal Set when `tl.wait` waited for it. */
  _waited = false;

  toString(): string {
    return `CompletionHandle(#${this.id} composite ${this.op})`;
  }
}

/** What `tl.recvAsync` returns: `await tl.wait(future)` gives the received handle. */
export class RecvFuture {
  /** @internal */
  constructor(
    readonly id: number,
    /** @internal Position of the async receive in the kernel's program. */
    readonly commandIndex: number,
    /** @internal Makes the handle once the receive completed. */
    readonly _finish: () => TensorHandle,
    /** @internal */
    readonly tl: TLContext,
  ) {}

  toString(): string {
    return `RecvFuture(#${this.id})`;
  }
}

/**
 * What `tl.loadAsync` returns: the load is issued, its PE_DMA copy runs while the kernel issues
 * other commands, and `await tl.wait(future)` (once) waits for the copy and gives the loaded
 * handle. Until then no command may read or write the destination's TCM bytes (the PE does not
 * order commands after a DMA into TCM): a handle on them is refused with `TL_INVALID_CALL`.
 */
export class LoadFuture {
  /** @internal `loading` until waited for, `landed` once complete, `taken` once `tl.wait` gave the handle. */
  _state: "loading" | "landed" | "taken" = "loading";

  /** @internal */
  constructor(
    readonly id: number,
    /** @internal Position of the async DMA in the kernel's program. */
    readonly commandIndex: number,
    /** @internal The handle the load lands in (given out by `tl.wait`). */
    readonly _handle: TensorHandle,
    /** @internal Lands the copy's bytes in phase 1 (runner mode) once it completed. */
    private readonly landBytes: () => void,
    /** @internal The `file:line:col` of the `tl.loadAsync` call, or null. */
    readonly _site: string | null,
    /** @internal */
    readonly tl: TLContext,
  ) {}

  /**
   * @internal The copy completed (a `wait` covered it): its bytes land in TCM. Throws
   * `TL_INVALID_CALL` when the destination's scratch was released while the copy was in flight.
   */
  _land(): void {
    if (this._state !== "loading") return;
    this._state = "landed";
    if (this._handle._released) {
      throw this.tl._error(
        "TL_INVALID_CALL",
        `tl.wait: the TCM destination of ${this}${this._site !== null ? ` (${this._site})` : ""} was released by tl.scratchRelease while the load was in flight, so other data may be there now. Wait for the load before releasing its scratch (tl.scratchRelease after tl.wait).`,
      );
    }
    this.landBytes();
  }

  /** @internal The loaded handle, once: `tl.wait` gives it out. */
  _take(): TensorHandle {
    this._state = "taken";
    return this._handle;
  }

  /** @internal True when `[address, address + bytes)` overlaps the destination. */
  _overlaps(address: number, bytes: number): boolean {
    const dst = this._handle.address;
    return address < dst + this._handle.nbytes && dst < address + bytes;
  }

  /** @internal Why `what` may not be used yet, and what to do. */
  _usedTooEarly(what: string): string {
    const at = this._site !== null ? ` (${this._site})` : "";
    return `${what} overlaps the TCM destination of ${this}${at}, still in flight: wait for the load first (\`const x = await tl.wait(future)\`). The PE does not order a command after a DMA that writes the bytes it reads or writes.`;
  }

  toString(): string {
    return `LoadFuture(#${this.id} ${this._handle.dtype} ${formatShape(this._handle.shape)})`;
  }
}

/** @internal A KbError for a tl call (the context adds kernel, PE and time). */
export function callError(tl: TLContext, detail: string): KbError {
  return tl._error("TL_INVALID_CALL", detail);
}
