import {
  type EpilogueOp,
  MATH_OPS,
  type MathCommand,
  type PeCommand,
  TCM_WINDOW_BYTES,
  tcmAddress,
} from "@kb/components";
import { KbError, type KbErrorCode } from "@kb/errors";
import { DTYPE_BYTES, type Dtype, formatShape, isDtype, isFloatDtype, shapeSize, Tensor } from "@kb/tensor";
import { decodeAddress } from "@kb/topology";
import { CallSite, formatLocation } from "./call-site.js";
import { CompletionHandle, type HandleInit, RecvFuture, TensorHandle } from "./handles.js";
import {
  blockPending,
  type DeviceTensorInfo,
  type KernelMemory,
  markBlockPending,
  pendingIn,
} from "./kernel-memory.js";

/** Scratch allocations are aligned to this many bytes (ADR-0046 D5). */
export const SCRATCH_ALIGN = 16;

/** Where a kernel instance runs and what it is told about the grid. */
export interface KernelPlacement {
  /** PE id, `sip0.cube1.pe3`. */
  readonly pe: string;
  readonly sip: number;
  readonly cube: number;
  /** PE index within its cube. */
  readonly peIndex: number;
  /** `programId(axis)` for axis 0 (PE within the grid's cube), 1 (cube), 2 (SIP). */
  readonly programId: readonly [number, number, number];
  /** `numPrograms(axis)`: PEs per cube, cubes per SIP, SIPs of the grid. */
  readonly numPrograms: readonly [number, number, number];
}

/** @internal How a TLContext hands commands on: a KernelRunner, or a command list. */
export interface CommandSink {
  /**
   * Issues `command` at program position `index`; resolves when the PE_CPU is done with it (a
   * synchronous command completed, an async one handed to the scheduler).
   */
  issue(command: PeCommand): { readonly index: number; readonly done: Promise<void> };
  /** Simulated time for error messages (null in command-list mode). */
  now(): number | null;
  /** True in runner mode. */
  readonly runner: boolean;
}

/** Options of a {@link TLContext}. */
export interface TLOptions {
  /** Kernel name (errors, traces). */
  readonly kernel: string;
  readonly placement: KernelPlacement;
  /** The PE's TCM range for compute outputs and loaded tiles: TCM byte offsets within its window. */
  readonly scratch: { readonly offset: number; readonly bytes: number };
  /** PE_CPU cycles charged before every call that emits a command (ADR-0046 D6; default 0). */
  readonly dispatchCycles?: number;
  /** Runner mode: the memory store (loads return real data, stores are visible at issue). */
  readonly memory?: KernelMemory | null;
}

/** Options of `tl.load` / `tl.store` on a 2-D block of a larger row-major matrix. */
export interface BlockOptions {
  /** Elements between the starts of consecutive rows in device memory (default: contiguous). */
  readonly stride?: number;
}

/** Options of `tl.load`: a block, and where in TCM it lands. */
export interface LoadOptions extends BlockOptions {
  /**
   * Land the block in this TCM handle (same shape and dtype, from this kernel) instead of fresh
   * scratch: a kernel that streams through a fixed buffer allocates it once. The returned handle
   * names the same bytes; `out` itself must not be read afterwards.
   */
  readonly out?: TensorHandle;
}

/** Options of the math calls (`tl.add`, `tl.exp`, `tl.sum`, ...). */
export interface MathOptions {
  /**
   * Write the result into this TCM handle (the result's shape and dtype, from this kernel)
   * instead of fresh scratch. It may be one of the inputs (`tl.add(acc, x, { out: acc })`
   * accumulates in place). The returned handle names the same bytes; `out` itself must not be
   * read afterwards.
   */
  readonly out?: TensorHandle;
}

/** Options of `tl.dot`. */
export interface DotOptions {
  /** Accumulate into this handle (Triton's `tl.dot(a, b, acc)`); the result replaces it. */
  readonly acc?: TensorHandle;
  /** Output dtype (default: the accumulator's, else f32 for float inputs and i32 for i8). */
  readonly outDtype?: Dtype;
}

/** An epilogue step of `tl.composite("gemm", ...)`. */
export interface EpilogueSpec {
  /** An elementwise op (`relu`, `add` with `scalar`, `sigmoid`, ...). */
  readonly op: string;
  readonly scope?: "k_tile" | "output_tile";
  readonly scalar?: number;
}

/** Options of `tl.composite`. */
export interface CompositeOptions {
  /** Device address of the output (HBM). */
  readonly outPtr: number | { readonly address: number };
  /** For `composite("math", ...)`: the elementwise or row op. */
  readonly mathOp?: string;
  /** Scalars of the math op (`add` with a scalar, `clamp` bounds). */
  readonly scalars?: readonly number[];
  readonly epilogue?: readonly EpilogueSpec[];
  readonly accDtype?: Dtype;
  readonly outDtype?: Dtype;
  readonly tileShape?: readonly [number, number, number];
  /** Rows per tile of a composite math op. */
  readonly tileRows?: number;
}

/** Options of `tl.recv`. */
export interface RecvOptions {
  readonly shape: readonly number[];
  readonly dtype?: Dtype;
  /** With `dstAddr`: copy the payload there (`copy_to_dst`); without: read it in its slot. */
  readonly dstAddr?: number;
}

/** A device address, or anything with an `address` (a runtime `DeviceTensor`). */
export type Pointer = number | { readonly address: number };

/** A device tensor with an element type, printed as `C (f16 [64, 64])`. */
interface TypedTensor extends DeviceTensorInfo {
  readonly dtype: Dtype;
  toString(): string;
}

/** Where a loaded tile came from: its device address and, when strided, its row stride in elements. */
interface LoadSource {
  readonly address: number;
  readonly stride: number | null;
}

const UNARY = ["exp", "log", "sqrt", "abs", "sigmoid", "cos", "sin", "relu"] as const;
/** Elementwise ops an epilogue may apply. */
const EPILOGUE_OPS = new Set(
  Object.entries(MATH_OPS)
    .filter(([name, info]) => info.shape === "elementwise" && name !== "fill" && name !== "iota")
    .map(([name]) => name),
);
const SCALAR_BINARY = new Set(["add", "sub", "mul", "div", "maximum", "minimum"]);

/**
 * The `tl` object a kernel receives (ADR-0046): one per kernel instance (PE and launch). Metadata
 * calls (`programId`, `ref`, `zeros`, `trans`, ...) are synchronous; calls that emit a command
 * return a promise and must be awaited before the next call.
 */
export class TLContext {
  readonly kernel: string;
  readonly placement: KernelPlacement;
  readonly dispatchCycles: number;
  /** @internal */
  readonly memory: KernelMemory | null;
  private readonly sink: CommandSink;
  private readonly scratchBase: number;
  private readonly scratchBytes: number;
  private scratchCursor = 0;
  private nextHandle = 0;
  private nextCompletion = 0;
  /** Live scratch handles, in allocation order (for `scratchRelease`). */
  private scratchHandles: TensorHandle[] = [];
  /** Async commands not waited for yet. */
  private readonly outstanding = new Set<CompletionHandle | RecvFuture>();
  /** The tl call that has been made and has not completed yet (at most one: calls are awaited). */
  private inFlight: CallSite | null = null;
  /** The first error a tl call of this kernel raised (it fails the kernel even if not awaited). */
  private firstFailure: unknown = null;

  /** @internal Made by a KernelRunner or `commandList`. */
  constructor(options: TLOptions, sink: CommandSink) {
    this.kernel = options.kernel;
    this.placement = options.placement;
    this.dispatchCycles = options.dispatchCycles ?? 0;
    this.memory = options.memory ?? null;
    this.sink = sink;
    const { offset, bytes } = options.scratch;
    if (!(Number.isInteger(offset) && offset >= 0 && Number.isInteger(bytes) && bytes >= 0)) {
      throw new KbError(
        "TL_INVALID_CALL",
        `scratch must be whole bytes >= 0, got offset ${offset}, ${bytes} bytes.`,
      );
    }
    if (offset + bytes > TCM_WINDOW_BYTES) {
      throw new KbError(
        "TL_INVALID_CALL",
        `scratch [${offset}, ${offset + bytes}) does not fit a PE's TCM window of ${TCM_WINDOW_BYTES} bytes.`,
      );
    }
    const { sip, cube, peIndex } = options.placement;
    this.scratchBase = tcmAddress(sip, cube, peIndex, offset);
    this.scratchBytes = bytes;
  }

  // ---------------------------------------------------------------------------------------------
  // Index and metadata (synchronous, no command)

  /** Axis 0: the PE's index in its cube's part of the grid; 1: the cube's; 2: the SIP's. */
  programId(axis = 0): number {
    return this.placement.programId[this.axis(axis, "programId")] as number;
  }

  /** Axis 0: PEs per cube in the grid; 1: cubes per SIP; 2: SIPs. */
  numPrograms(axis = 0): number {
    return this.placement.numPrograms[this.axis(axis, "numPrograms")] as number;
  }

  /** Ceiling division (Triton's `tl.cdiv`). */
  static cdiv(a: number, b: number): number {
    return Math.ceil(a / b);
  }

  /** Ceiling division (Triton's `tl.cdiv`). */
  cdiv(a: number, b: number): number {
    if (!Number.isFinite(a) || !Number.isFinite(b) || b === 0) {
      throw this._error("TL_INVALID_CALL", `tl.cdiv(${a}, ${b}): needs finite numbers and b != 0.`);
    }
    return Math.ceil(a / b);
  }

  /** A handle on device memory without moving bytes (e.g. an operand a composite streams). */
  ref(ptr: Pointer, shape: readonly number[], dtype: Dtype = "f16"): TensorHandle {
    this.checkShape("ref", shape);
    this.checkDtype("ref", dtype);
    return this.handle({
      op: "ref",
      origin: "ref",
      shape,
      dtype,
      space: "hbm",
      address: this.address(ptr, "ref"),
    });
  }

  /** A TCM tensor of zeros (written to TCM the first time a command reads it). */
  zeros(shape: readonly number[], dtype: Dtype = "f16"): TensorHandle {
    return this.full(shape, 0, dtype, "zeros");
  }

  /**
   * TCM scratch of `shape` without defined values, to write into (`{ out }` of loads and math
   * ops, `dstAddr` of a receive, through `tl.view`): a buffer that costs no fill. Its `data`
   * throws until something wrote it.
   */
  empty(shape: readonly number[], dtype: Dtype = "f16"): TensorHandle {
    this.checkShape("empty", shape);
    this.checkDtype("empty", dtype);
    const handle = this.scratchHandle("empty", "compute", shape, dtype);
    this.memory?.markPending?.(handle.address, handle.nbytes);
    return handle;
  }

  /** A TCM tensor filled with `value` (written to TCM the first time a command reads it). */
  full(shape: readonly number[], value: number, dtype: Dtype = "f16", op = "full"): TensorHandle {
    this.checkShape(op, shape);
    this.checkDtype(op, dtype);
    const handle = this.scratchHandle(op, "constant", shape, dtype);
    handle._data = Tensor.full(shape, value, dtype);
    return handle;
  }

  /** `[start, end)` as a 1-D TCM tensor (written to TCM the first time a command reads it). */
  arange(start: number, end: number, dtype: Dtype = "i32"): TensorHandle {
    if (!Number.isInteger(start) || !Number.isInteger(end) || end <= start) {
      throw this._error("TL_INVALID_CALL", `tl.arange(${start}, ${end}): needs integers with end > start.`);
    }
    const handle = this.scratchHandle("arange", "constant", [end - start], dtype);
    handle._data = Tensor.fromArray(
      Array.from({ length: end - start }, (_, i) => start + i),
      [end - start],
      dtype,
    );
    return handle;
  }

  /**
   * Elements `[start, start + size(shape))` of the contiguous TCM tensor `x`, as a tensor of
   * `shape`: the same bytes, no command (a tail tile, one piece of a buffer a kernel streams
   * through). Writing through the view (the `out` of a load or math op) changes `x` and vice versa;
   * a view of a constant (`tl.zeros`) writes the whole constant to TCM first. Buffers meant to be
   * written piece by piece are `tl.empty`.
   */
  view(x: TensorHandle, start: number, shape: readonly number[]): TensorHandle {
    this.own("view", x);
    this.checkShape("view", shape);
    if (x.space !== "tcm" || x.transposed || x.rowStride !== x.shape[x.shape.length - 1]) {
      throw this._error(
        "TL_INVALID_CALL",
        `tl.view: ${x.describe()} from tl.${x.op} must be a plain TCM tensor (not a ref, a transposed or a strided view).`,
      );
    }
    const size = shapeSize(shape);
    if (!Number.isInteger(start) || start < 0 || start + size > x.size) {
      throw this._error(
        "TL_INVALID_CALL",
        `tl.view: elements [${start}, ${start + size}) are not within ${x.describe()} (${x.size} elements).`,
      );
    }
    const bytes = DTYPE_BYTES[x.dtype];
    const handle = this.handle({
      op: "view",
      origin: x.origin,
      shape,
      dtype: x.dtype,
      space: "tcm",
      address: x.address + start * bytes,
      scratchOffset: x.scratchOffset,
    });
    if (x._data !== null) {
      handle._data = new Tensor(shape, x.dtype, x._data.bytes.slice(start * bytes, (start + size) * bytes));
    }
    // A constant is written to TCM as a whole (its root) the first time any part is read or written.
    handle._root = x._root ?? x;
    return handle;
  }

  /** The last two dimensions swapped; same bytes (a GEMM reads it transposed). */
  trans(x: TensorHandle): TensorHandle {
    this.own("trans", x);
    if (x.shape.length < 2) {
      throw this._error("TL_INVALID_CALL", `tl.trans(${x.describe()}): needs at least 2 dimensions.`);
    }
    const shape = [...x.shape];
    const last = shape.length - 1;
    [shape[last - 1], shape[last]] = [shape[last] as number, shape[last - 1] as number];
    const handle = this.handle({
      op: "trans",
      origin: x.origin,
      shape,
      dtype: x.dtype,
      space: x.space,
      address: x.address,
      source: x.source,
      sourceStride: x.sourceStride,
      transposed: !x.transposed,
    });
    if (x._data !== null) handle._data = transpose(x._data);
    handle._materialised = x._materialised;
    return handle;
  }

  /** A mark of the scratch allocator: `scratchRelease(mark)` frees everything allocated after it. */
  scratchMark(): number {
    return this.scratchCursor;
  }

  /**
   * Frees the scratch allocated after `mark` (from `scratchMark`), so a loop over tiles can reuse
   * TCM. Handles allocated after the mark become unusable: passing one to a later call is an error.
   */
  scratchRelease(mark: number): void {
    if (!Number.isInteger(mark) || mark < 0 || mark > this.scratchCursor) {
      throw this._error(
        "TL_INVALID_CALL",
        `tl.scratchRelease(${mark}): not a mark of this kernel's scratch (cursor at ${this.scratchCursor}).`,
      );
    }
    // Handles that share released scratch (an accumulated dot's result) are released too.
    this.scratchHandles = this.scratchHandles.filter((handle) => {
      if ((handle.scratchOffset as number) < mark) return true;
      handle._released = true;
      return false;
    });
    this.scratchCursor = mark;
  }

  /** Bytes of scratch in use and available. */
  get scratchUsage(): { readonly used: number; readonly bytes: number } {
    return { used: this.scratchCursor, bytes: this.scratchBytes };
  }

  // ---------------------------------------------------------------------------------------------
  // Data movement

  /**
   * Loads `shape` elements at `ptr` (HBM or SRAM) into TCM through PE_DMA. In runner mode the
   * handle's `data` holds the real values, read when the copy completes.
   */
  load(
    ptr: Pointer,
    shape: readonly number[],
    dtype: Dtype = "f16",
    options: LoadOptions = {},
  ): Promise<TensorHandle> {
    return this.call("load", async () => {
      this.checkShape("load", shape);
      this.checkDtype("load", dtype);
      const src = this.address(ptr, "load");
      const block = this.block("load", shape, dtype, options.stride);
      this.checkDeviceSide("load", src);
      const cols = shape[shape.length - 1] as number;
      const from = {
        address: src,
        stride: options.stride !== undefined && options.stride !== cols ? options.stride : null,
      };
      const handle =
        options.out === undefined
          ? this.scratchHandle("load", "load", shape, dtype, from)
          : await this.into("load", options.out, "load", shape, dtype, from);
      this.checkElementType(
        src,
        dtype,
        (t) =>
          `tl.load of ${dtype} elements from ${t}: the bytes would be read as ${dtype}. Load as ${t.dtype} (its element type) and tl.cast the tile if you need ${dtype}.`,
      );
      const reads = this.memory === null ? null : this.readBlock(src, block, `tl.load at ${hex(src)}`);
      await this.dispatch();
      await this.issue({
        kind: "dma",
        src,
        dst: handle.address,
        bytes: block.rowBytes,
        rows: block.rows,
        srcStride: block.stride,
        dstStride: block.rowBytes,
      });
      if (reads !== null) {
        // Data is read when the copy completes (ADR-0020 D3), then lands in TCM. Bytes a compute
        // result wrote (pending in phase 1) stay unknown: the tile is pending too.
        const memory = this.memory as KernelMemory;
        if (blockPending(memory, src, block)) {
          memory.markPending?.(handle.address, handle.nbytes);
        } else {
          const bytes = reads();
          memory.write(handle.address, bytes, `tl.load into TCM ${hex(handle.address)}`);
          memory.observeLoad?.({
            kernel: this.kernel,
            pe: this.placement.pe,
            site: this.inFlight?.location ? formatLocation(this.inFlight.location) : null,
            src,
            dst: handle.address,
            rows: block.rows,
            rowBytes: block.rowBytes,
            srcStride: block.stride,
            bytes,
            atNs: this.sink.now() ?? 0,
          });
        }
      }
      return handle;
    });
  }

  /**
   * Stores `value` (a TCM handle) at `ptr` through PE_DMA. Visible at issue time in runner mode
   * when the handle has data; a pending compute result only binds the destination (its values
   * arrive in phase 2).
   */
  store(ptr: Pointer, value: TensorHandle, options: BlockOptions = {}): Promise<void> {
    return this.call("store", async () => {
      this.own("store", value);
      const dst = this.address(ptr, "store");
      this.checkDeviceSide("store", dst);
      const source = await this.inTcm("store", value);
      const block = this.block("store", value.shape, value.dtype, options.stride);
      this.checkElementType(
        dst,
        value.dtype,
        (t) =>
          `tl.store of ${value.describe()} from tl.${value.op} into ${t}: the tile's ${value.dtype} bytes (${DTYPE_BYTES[value.dtype]} per element) would be written into ${t.dtype} elements (${DTYPE_BYTES[t.dtype]} bytes each). Convert it first: await tl.store(ptr, await tl.cast(x, "${t.dtype}")).`,
      );
      if (this.memory !== null) {
        this.checkBlockAccess(dst, block, `tl.store at ${hex(dst)}`);
        // Known bytes are visible at issue (ADR-0020 D3); a pending tile makes the destination
        // pending, so no later load in phase 1 reads what was there before.
        const values = this._valuesOf(source);
        if (values !== null) this.writeBlock(dst, block, values.bytes, `tl.store at ${hex(dst)}`);
        else markBlockPending(this.memory, dst, block);
      }
      await this.dispatch();
      await this.issue({
        kind: "dma",
        src: source.address,
        dst,
        bytes: block.rowBytes,
        rows: block.rows,
        srcStride: block.rowBytes,
        dstStride: block.stride,
      });
    });
  }

  // ---------------------------------------------------------------------------------------------
  // GEMM and composite

  /** `a @ b` on PE_GEMM; both in TCM, `(M, K) x (K, N)`. With `acc`, adds into it. */
  dot(a: TensorHandle, b: TensorHandle, options: DotOptions | TensorHandle = {}): Promise<TensorHandle> {
    return this.call("dot", async () => {
      const opts: DotOptions = options instanceof TensorHandle ? { acc: options } : options;
      this.own("dot", a);
      this.own("dot", b);
      if (a.shape.length !== 2 || b.shape.length !== 2) {
        throw this._error(
          "TL_INVALID_CALL",
          `tl.dot needs 2-D operands, got ${a.describe()} and ${b.describe()}.`,
        );
      }
      const [m, k] = a.shape as [number, number];
      const [k2, n] = b.shape as [number, number];
      if (k !== k2) {
        throw this._error(
          "TL_INVALID_CALL",
          `tl.dot: inner dimensions differ: ${formatShape(a.shape)} x ${formatShape(b.shape)} (${k} != ${k2}).`,
        );
      }
      if (a.dtype !== b.dtype) {
        throw this._error(
          "TL_INVALID_CALL",
          `tl.dot: operand dtypes differ: ${a.dtype} and ${b.dtype}; cast one first.`,
        );
      }
      const acc = opts.acc;
      const defaultOut: Dtype = isFloatDtype(a.dtype) ? "f32" : "i32";
      const outDtype = opts.outDtype ?? acc?.dtype ?? defaultOut;
      this.checkDtype("dot", outDtype);
      if (acc !== undefined) {
        this.own("dot", acc);
        if (!isFloatDtype(a.dtype) && acc.dtype !== "i32") {
          throw this._error(
            "TL_INVALID_CALL",
            `tl.dot: ${a.dtype} operands accumulate in i32, but the accumulator ${acc.describe()} is ${acc.dtype}. Accumulate in an i32 tensor (tl.zeros(shape, "i32")) and cast the result afterwards.`,
          );
        }
        if (acc.shape.length !== 2 || acc.shape[0] !== m || acc.shape[1] !== n) {
          throw this._error(
            "TL_INVALID_CALL",
            `tl.dot: accumulator ${acc.describe()} does not match the result shape ${formatShape([m, n])}.`,
          );
        }
        if (acc.dtype !== outDtype) {
          throw this._error(
            "TL_INVALID_CALL",
            `tl.dot: accumulator is ${acc.dtype} but the output dtype is ${outDtype}.`,
          );
        }
        if (acc.space !== "tcm" || acc.transposed) {
          throw this._error(
            "TL_INVALID_CALL",
            `tl.dot: the accumulator ${acc.describe()} must be a plain TCM tensor.`,
          );
        }
      }
      const aa = await this.inTcm("dot", a, true);
      const bb = await this.inTcm("dot", b, true);
      // A zeros accumulator that was never written: overwrite instead of adding (same result).
      const freshZeros = acc !== undefined && acc.origin === "constant" && !acc._materialised && isZeros(acc);
      const accumulator = acc !== undefined && !freshZeros ? await this.inTcm("dot", acc) : acc;
      const out =
        accumulator !== undefined
          ? this.handle({
              op: "dot",
              origin: "compute",
              shape: [m, n],
              dtype: outDtype,
              space: "tcm",
              address: accumulator.address,
              scratchOffset: accumulator.scratchOffset,
            })
          : this.scratchHandle("dot", "compute", [m, n], outDtype);
      await this.dispatch();
      await this.issue({
        kind: "gemm",
        a: aa.address,
        b: bb.address,
        out: out.address,
        m,
        n,
        k,
        dtype: a.dtype,
        dtypeAcc: isFloatDtype(a.dtype) ? "f32" : "i32",
        dtypeOut: outDtype,
        accumulate: accumulator !== undefined && !freshZeros,
        transposeA: aa.transposed,
        transposeB: bb.transposed,
      });
      this.memory?.markPending?.(out.address, out.nbytes);
      return out;
    });
  }

  /**
   * A tiled pipeline on the PE scheduler, non-blocking (ADR-0046 D3.3): `"gemm"` computes
   * `outPtr = a @ b` from HBM operands (refs or loaded tiles' sources), `"math"` applies
   * `mathOp` row-tile by row-tile. Wait for the returned handle with `tl.wait`.
   */
  composite(
    op: "gemm" | "math",
    a: TensorHandle,
    b: TensorHandle | null | undefined,
    options: CompositeOptions,
  ): Promise<CompletionHandle> {
    return this.call("composite", async () => {
      this.own("composite", a);
      if (b !== null && b !== undefined) this.own("composite", b);
      const out = this.address(options.outPtr, "composite outPtr");
      this.checkDeviceSide("composite outPtr", out);
      let command: PeCommand;
      /** Bytes the composite writes at `out` (pending in phase 1: it computes). */
      let outBytes: number;
      if (op === "gemm") {
        if (b === null || b === undefined)
          throw this._error("TL_INVALID_CALL", 'tl.composite("gemm") needs b.');
        const epilogue = this.epilogue(options.epilogue ?? []);
        if (a.shape.length !== 2 || b.shape.length !== 2 || a.shape[1] !== b.shape[0]) {
          throw this._error(
            "TL_INVALID_CALL",
            `tl.composite("gemm"): needs (M, K) x (K, N), got ${formatShape(a.shape)} x ${formatShape(b.shape)}.`,
          );
        }
        if (a.dtype !== b.dtype) {
          throw this._error(
            "TL_INVALID_CALL",
            `tl.composite("gemm"): operand dtypes differ: a is ${a.dtype}, b is ${b.dtype}; both operands of a GEMM share one element type (cast one on the host, or tl.ref it with its own dtype).`,
          );
        }
        const [m, k] = a.shape as [number, number];
        const n = b.shape[1] as number;
        const tile = options.tileShape;
        const aAddress = this.streamed("composite", a, true);
        const bAddress = this.streamed("composite", b, true);
        const refFix = (t: TypedTensor) =>
          `Reference it with its own dtype: tl.ref(ptr, shape, "${t.dtype}").`;
        this.checkStreamed("operand a", aAddress, m * k, a.dtype, refFix);
        this.checkStreamed("operand b", bAddress, k * n, b.dtype, refFix);
        outBytes = m * n * DTYPE_BYTES[options.outDtype ?? a.dtype];
        this.checkStreamed(
          "output",
          out,
          m * n,
          options.outDtype ?? a.dtype,
          (t) =>
            `Pass outDtype: "${t.dtype}" (the output is rounded to it once), or allocate the output as ${options.outDtype ?? a.dtype}.`,
        );
        command = {
          kind: "composite_gemm",
          a: aAddress,
          b: bAddress,
          c: out,
          m,
          n,
          k,
          dtype: a.dtype,
          ...(options.accDtype !== undefined ? { dtypeAcc: options.accDtype } : {}),
          ...(options.outDtype !== undefined ? { dtypeOut: options.outDtype } : {}),
          ...(tile !== undefined ? { tile: { m: tile[0], n: tile[1], k: tile[2] } } : {}),
          ...(epilogue.length > 0 ? { epilogue } : {}),
          ...(a.transposed ? { transposeA: true } : {}),
          ...(b.transposed ? { transposeB: true } : {}),
          async: true,
        };
      } else if (op === "math") {
        const mathOp = options.mathOp;
        const info = mathOp === undefined ? undefined : MATH_OPS[mathOp];
        if (mathOp === undefined || info === undefined || mathOp === "fill" || mathOp === "iota") {
          throw this._error(
            "TL_INVALID_CALL",
            `tl.composite("math") needs mathOp, one of ${Object.keys(MATH_OPS)
              .filter((name) => name !== "fill" && name !== "iota")
              .join(", ")}; got ${JSON.stringify(mathOp)}.`,
          );
        }
        const inputs = b === null || b === undefined ? [a] : [a, b];
        this.checkCompositeMathOperands(mathOp, info.arity, inputs.length, options.scalars ?? []);
        for (const input of inputs) {
          if (formatShape(input.shape) !== formatShape(a.shape) || input.dtype !== a.dtype) {
            throw this._error(
              "TL_INVALID_CALL",
              `tl.composite("math"): inputs must match, got ${inputs.map((h) => h.describe()).join(" and ")}.`,
            );
          }
        }
        const cols = a.shape[a.shape.length - 1] as number;
        const addresses = inputs.map((input) => this.streamed("composite", input));
        const refFix = (t: TypedTensor) =>
          `Reference it with its own dtype: tl.ref(ptr, shape, "${t.dtype}").`;
        addresses.forEach((address, i) => {
          this.checkStreamed(`input ${i}`, address, a.size, a.dtype, refFix);
        });
        const outCols = info.shape === "reduce" ? 1 : cols;
        outBytes = (a.size / cols) * outCols * DTYPE_BYTES[a.dtype];
        this.checkStreamed(
          "output",
          out,
          (a.size / cols) * outCols,
          a.dtype,
          (t) =>
            `A composite math op writes its inputs' dtype (${a.dtype}); allocate the output as ${a.dtype}, or cast the inputs on the host to ${t.dtype}.`,
        );
        command = {
          kind: "composite_math",
          op: mathOp,
          inputs: addresses,
          out,
          rows: a.size / cols,
          cols,
          dtype: a.dtype,
          ...(options.scalars !== undefined ? { scalars: [...options.scalars] } : {}),
          ...(options.tileRows !== undefined ? { tileRows: options.tileRows } : {}),
          async: true,
        };
      } else {
        throw this._error(
          "TL_INVALID_CALL",
          `tl.composite: unknown op ${JSON.stringify(op)}; use "gemm" or "math".`,
        );
      }
      await this.dispatch();
      const issued = this.sink.issue(command);
      this.memory?.markPending?.(out, outBytes);
      const handle = new CompletionHandle(this.nextCompletion++, op, issued.index, this);
      this.outstanding.add(handle);
      await issued.done;
      return handle;
    });
  }

  // ---------------------------------------------------------------------------------------------
  // Math (blocking, PE_MATH)

  exp(x: TensorHandle, options?: MathOptions): Promise<TensorHandle> {
    return this.unary("exp", x, options);
  }
  log(x: TensorHandle, options?: MathOptions): Promise<TensorHandle> {
    return this.unary("log", x, options);
  }
  sqrt(x: TensorHandle, options?: MathOptions): Promise<TensorHandle> {
    return this.unary("sqrt", x, options);
  }
  abs(x: TensorHandle, options?: MathOptions): Promise<TensorHandle> {
    return this.unary("abs", x, options);
  }
  sigmoid(x: TensorHandle, options?: MathOptions): Promise<TensorHandle> {
    return this.unary("sigmoid", x, options);
  }
  cos(x: TensorHandle, options?: MathOptions): Promise<TensorHandle> {
    return this.unary("cos", x, options);
  }
  sin(x: TensorHandle, options?: MathOptions): Promise<TensorHandle> {
    return this.unary("sin", x, options);
  }
  relu(x: TensorHandle, options?: MathOptions): Promise<TensorHandle> {
    return this.unary("relu", x, options);
  }

  add(a: TensorHandle, b: TensorHandle | number, options?: MathOptions): Promise<TensorHandle> {
    return this.binary("add", a, b, options);
  }
  sub(a: TensorHandle, b: TensorHandle | number, options?: MathOptions): Promise<TensorHandle> {
    return this.binary("sub", a, b, options);
  }
  mul(a: TensorHandle, b: TensorHandle | number, options?: MathOptions): Promise<TensorHandle> {
    return this.binary("mul", a, b, options);
  }
  div(a: TensorHandle, b: TensorHandle | number, options?: MathOptions): Promise<TensorHandle> {
    return this.binary("div", a, b, options);
  }
  maximum(a: TensorHandle, b: TensorHandle | number, options?: MathOptions): Promise<TensorHandle> {
    return this.binary("maximum", a, b, options);
  }
  minimum(a: TensorHandle, b: TensorHandle | number, options?: MathOptions): Promise<TensorHandle> {
    return this.binary("minimum", a, b, options);
  }

  /** `a * b + c`. */
  fma(a: TensorHandle, b: TensorHandle, c: TensorHandle, options?: MathOptions): Promise<TensorHandle> {
    return this.math("fma", [a, b, c], [], { out: options?.out });
  }

  /** `x` clamped to `[lo, hi]`. */
  clamp(x: TensorHandle, lo: number, hi: number, options?: MathOptions): Promise<TensorHandle> {
    if (!(lo <= hi)) throw this._error("TL_INVALID_CALL", `tl.clamp: needs lo <= hi, got ${lo} and ${hi}.`);
    return this.math("clamp", [x], [lo, hi], { out: options?.out });
  }

  /** `cond ? a : b` elementwise (cond nonzero). */
  where(cond: TensorHandle, a: TensorHandle, b: TensorHandle, options?: MathOptions): Promise<TensorHandle> {
    if (cond.dtype !== a.dtype || b.dtype !== a.dtype) {
      // One math command carries one input dtype: phase 2 would read cond with a's dtype.
      throw this._error(
        "TL_INVALID_CALL",
        `tl.where: cond, a and b must share a dtype, got ${cond.dtype}, ${a.dtype}, ${b.dtype}; cast cond first (tl.cast(cond, "${a.dtype}")).`,
      );
    }
    return this.math("where", [cond, a, b], [], { dtype: a.dtype, out: options?.out });
  }

  /** Softmax along `axis` as one PE_MATH op (phase 2 expands it to max, sub, exp, sum, div). */
  softmax(x: TensorHandle, axis = -1, options?: MathOptions): Promise<TensorHandle> {
    return this.math("softmax", [x], [], { axis, out: options?.out });
  }

  /** Sum along `axis` (that dimension becomes 1). */
  sum(x: TensorHandle, axis = -1, options?: MathOptions): Promise<TensorHandle> {
    return this.math("sum", [x], [], { axis, out: options?.out });
  }
  /** Maximum along `axis` (that dimension becomes 1). */
  max(x: TensorHandle, axis = -1, options?: MathOptions): Promise<TensorHandle> {
    return this.math("max", [x], [], { axis, out: options?.out });
  }
  /** Minimum along `axis` (that dimension becomes 1). */
  min(x: TensorHandle, axis = -1, options?: MathOptions): Promise<TensorHandle> {
    return this.math("min", [x], [], { axis, out: options?.out });
  }

  /** `x` converted to `dtype` (Triton's `x.to(dtype)`), rounding to nearest even. */
  async cast(x: TensorHandle, dtype: Dtype, options?: MathOptions): Promise<TensorHandle> {
    this.checkDtype("cast", dtype);
    return this.math("cast", [x], [], { dtype, inputDtype: x.dtype, out: options?.out });
  }

  // ---------------------------------------------------------------------------------------------
  // IPCQ (ADR-0046 D3.10)

  /**
   * Sends a TCM handle to the neighbour in `direction` (IPCQ): blocks until a slot is free there
   * (credit-based flow control), then the PE_DMA moves the bytes while the kernel goes on. The
   * payload is read at issue (ADR-0046 D3.10 snapshot rule): changing or receiving into the
   * source afterwards does not change what arrives. The kernel's end waits for every arrival.
   */
  send(direction: string, src: TensorHandle): Promise<void> {
    return this.call("send", async () => {
      this.own("send", src);
      this.checkDirection("send", direction);
      const source = await this.inTcm("send", src);
      // Phase 1 moves real bytes only for data the kernel has (loads, constants, received data).
      const data = this.memory !== null ? (this._valuesOf(source)?.bytes.slice() ?? null) : null;
      await this.dispatch();
      await this.issue({
        kind: "ipcq_send",
        direction,
        src: source.address,
        bytes: source.nbytes,
        dtype: source.dtype,
        ...(data !== null ? { data } : {}),
      });
    });
  }

  /**
   * Receives from `direction` (where the data comes from: what the west neighbour sends "east"
   * arrives from "west"), blocking until a payload arrived and paying the slot read. With
   * `dstAddr` the payload is copied there and the slot is freed at once; else the handle is the
   * slot itself, the kernel's until its next receive from that direction (or its end).
   */
  recv(direction: string | null, options: RecvOptions): Promise<TensorHandle> {
    return this.call("recv", async () => {
      const { finish } = await this.receive("recv", direction, options, true, false);
      return finish();
    });
  }

  /** DIAGNOSTIC ONLY: `recv` without the slot-read latency; production kernels must use `recv`. */
  recvNoConsume(direction: string | null, options: RecvOptions): Promise<TensorHandle> {
    return this.call("recvNoConsume", async () => {
      const { finish } = await this.receive("recvNoConsume", direction, options, false, false);
      return finish();
    });
  }

  /** A non-blocking receive: `await tl.wait(future)` gives the handle. */
  recvAsync(direction: string, options: RecvOptions): Promise<RecvFuture> {
    return this.call("recvAsync", async () => {
      const { index, finish } = await this.receive("recvAsync", direction, options, true, true);
      const future = new RecvFuture(this.nextCompletion++, index, finish, this);
      this.outstanding.add(future);
      return future;
    });
  }

  // ---------------------------------------------------------------------------------------------
  // Control

  /**
   * Waits for a composite (`CompletionHandle`), an async receive (`RecvFuture`, resolving to its
   * handle), or, without an argument, every outstanding async command. Timing only: a composite's
   * results stay pending in phase 1.
   */
  wait(handle?: CompletionHandle | RecvFuture): Promise<TensorHandle | undefined> {
    return this.call("wait", async () => {
      if (handle === undefined) {
        await this.dispatch();
        await this.issue({ kind: "wait" });
        this.outstanding.clear();
        return undefined;
      }
      if (handle.tl !== this) {
        throw this._error("TL_INVALID_CALL", `tl.wait: ${handle} belongs to another kernel instance.`);
      }
      if (!this.outstanding.has(handle)) {
        throw this._error("TL_INVALID_CALL", `tl.wait: ${handle} was already waited for.`);
      }
      this.outstanding.delete(handle);
      await this.dispatch();
      await this.issue({ kind: "wait", commands: [handle.commandIndex] });
      return handle instanceof RecvFuture ? handle._finish() : undefined;
    });
  }

  /** Keeps the PE_CPU busy for `n` cycles (scalar work of the kernel). */
  cycles(n: number): Promise<void> {
    return this.call("cycles", async () => {
      if (!(Number.isFinite(n) && n >= 0)) {
        throw this._error("TL_INVALID_CALL", `tl.cycles(${n}): needs a finite number >= 0.`);
      }
      await this.issue({ kind: "cycles", cycles: n });
    });
  }

  // ---------------------------------------------------------------------------------------------
  // Internals

  /**
   * @internal A KbError located at this kernel instance (kernel, PE, simulated time) and, while a
   * tl call runs, at that call's line in the kernel's source.
   */
  _error(code: KbErrorCode, detail: string, cause?: unknown, site: CallSite | null = this.inFlight): KbError {
    const now = this.sink.now();
    const location = site?.location ?? null;
    return new KbError(code, detail, {
      context: {
        ...(location !== null ? { file: location.file, line: location.line, col: location.col } : {}),
        kernel: this.kernel,
        pe: this.placement.pe,
        ...(now !== null ? { simTimeNs: now } : {}),
      },
      ...(cause !== undefined ? { cause } : {}),
    });
  }

  /**
   * @internal The values of `handle` as phase 1 knows them now, or null when it does not: a
   * constant's before it is written to TCM, else (runner mode) the bytes at its TCM address unless
   * a compute result wrote them (pending). Views read their bytes as they are now, so a write
   * through another view of the same tensor is seen.
   */
  _valuesOf(handle: TensorHandle): Tensor | null {
    if (handle.space !== "tcm") return null;
    const root = handle._root ?? handle;
    if (root.origin === "constant" && !root._materialised && !handle._materialised) return handle._data;
    const memory = this.memory;
    if (memory === null) return handle.origin === "constant" ? handle._data : null;
    if (memory.isPending === undefined && handle.origin === "compute") return null;
    if (pendingIn(memory, handle.address, handle.nbytes)) return null;
    const bytes = this.memoryCall(() =>
      memory.read(handle.address, handle.nbytes, `${handle.describe()}.data`),
    );
    if (!handle.transposed) return new Tensor(handle.shape, handle.dtype, bytes);
    const stored = [...handle.shape];
    const last = stored.length - 1;
    [stored[last - 1], stored[last]] = [stored[last] as number, stored[last - 1] as number];
    return transpose(new Tensor(stored, handle.dtype, bytes));
  }

  /**
   * @internal Why the kernel must fail although its function returned: a tl call that failed
   * (awaited or not), or one still in flight (never awaited). Null when it ended cleanly.
   */
  _endError(): KbError | null {
    if (this.firstFailure !== null) {
      const error = this.firstFailure;
      return error instanceof KbError
        ? error
        : this._error(
            "KERNEL_FAILED",
            `a tl call failed: ${error instanceof Error ? error.message : String(error)}`,
            error,
          );
    }
    const site = this.inFlight;
    if (site === null) return null;
    return this._error(
      "KERNEL_FAILED",
      `the kernel returned while ${site.describe()} was still in flight: await it (\`await tl.${site.call}(...)\`), so its command completes before the kernel ends.`,
      undefined,
      site,
    );
  }

  /**
   * Runs one tl call that emits commands: records where it was made, refuses it while another
   * call is still in flight (a missing `await`), and notes its failure so the kernel fails even
   * when nobody awaits it. The returned promise never counts as an unhandled rejection.
   */
  private call<T>(name: string, body: () => Promise<T>): Promise<T> {
    const site = CallSite.capture(name);
    const earlier = this.inFlight;
    let promise: Promise<T>;
    if (earlier !== null) {
      const error = this._error(
        "KERNEL_FAILED",
        `${earlier.describe()} was still in flight when ${site.describe()} was issued: await every tl call before making the next one (\`await tl.${earlier.call}(...)\`); for work that overlaps, use the async forms (tl.composite, tl.recvAsync) and tl.wait.`,
        undefined,
        site,
      );
      this.noteFailure(error);
      promise = Promise.reject(error);
    } else {
      this.inFlight = site;
      promise = body().then(
        (value) => {
          if (this.inFlight === site) this.inFlight = null;
          return value;
        },
        (error: unknown) => {
          if (this.inFlight === site) this.inFlight = null;
          this.noteFailure(error);
          throw error;
        },
      );
    }
    promise.catch(ignore);
    return promise;
  }

  private noteFailure(error: unknown): void {
    if (this.firstFailure === null) this.firstFailure = error;
  }

  private axis(axis: number, call: string): number {
    if (axis !== 0 && axis !== 1 && axis !== 2) {
      throw this._error("TL_INVALID_CALL", `tl.${call}(${axis}): axis must be 0 (PE), 1 (cube) or 2 (SIP).`);
    }
    return axis;
  }

  private handle(init: Omit<HandleInit, "id">): TensorHandle {
    const handle = new TensorHandle(this, { ...init, id: this.nextHandle++ });
    if (handle.scratchOffset !== null) this.scratchHandles.push(handle);
    return handle;
  }

  private scratchHandle(
    op: string,
    origin: TensorHandle["origin"],
    shape: readonly number[],
    dtype: Dtype,
    from: LoadSource | null = null,
  ): TensorHandle {
    const bytes = shapeSize(shape) * DTYPE_BYTES[dtype];
    const offset = this.scratchCursor;
    const end = offset + Math.ceil(bytes / SCRATCH_ALIGN) * SCRATCH_ALIGN;
    if (end > this.scratchBytes) {
      throw this._error(
        "TL_SCRATCH_OVERFLOW",
        `tl.${op} needs ${bytes} bytes of TCM scratch for ${dtype} ${formatShape(shape)}, but ${offset} of the ${this.scratchBytes} scratch bytes are in use (${this.scratchBytes - offset} free). Release tiles you no longer need with tl.scratchRelease(tl.scratchMark()) around a loop body, use smaller tiles, or launch with a larger scratch.`,
      );
    }
    this.scratchCursor = end;
    const handle = this.handle({
      op,
      origin,
      shape,
      dtype,
      space: "tcm",
      address: this.scratchBase + offset,
      source: from?.address ?? null,
      sourceStride: from?.stride ?? null,
      scratchOffset: offset,
    });
    return handle;
  }

  /**
   * A handle for a result written into `out` (the `out` option of loads and math ops): checks
   * `out` is this kernel's plain TCM tensor of the result's shape and dtype, and names its bytes.
   */
  private async into(
    op: string,
    out: TensorHandle,
    origin: TensorHandle["origin"],
    shape: readonly number[],
    dtype: Dtype,
    from: LoadSource | null = null,
  ): Promise<TensorHandle> {
    this.own(op, out);
    if (out.space !== "tcm" || out.transposed || out.rowStride !== out.shape[out.shape.length - 1]) {
      throw this._error(
        "TL_INVALID_CALL",
        `tl.${op}: out ${out.describe()} from tl.${out.op} must be a plain TCM tensor (not a ref, a transposed or a strided view).`,
      );
    }
    if (formatShape(out.shape) !== formatShape(shape) || out.dtype !== dtype) {
      throw this._error(
        "TL_INVALID_CALL",
        `tl.${op}: out ${out.describe()} does not match the result (${dtype} ${formatShape(shape)}).`,
      );
    }
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

  private async dispatch(): Promise<void> {
    if (this.dispatchCycles > 0) await this.issue({ kind: "cycles", cycles: this.dispatchCycles });
  }

  private async issue(command: PeCommand): Promise<void> {
    await this.sink.issue(command).done;
  }

  private address(ptr: Pointer, call: string): number {
    const address = typeof ptr === "number" ? ptr : ptr?.address;
    if (typeof address !== "number" || !Number.isInteger(address) || address < 0) {
      throw this._error(
        "TL_INVALID_CALL",
        `tl.${call}: expected a device address (a number, or a device tensor with .address), got ${String(ptr)}.`,
      );
    }
    return address;
  }

  private checkShape(call: string, shape: readonly number[]): void {
    if (
      !Array.isArray(shape) ||
      shape.length === 0 ||
      shape.some((size) => !Number.isInteger(size) || size < 1)
    ) {
      throw this._error(
        "TL_INVALID_CALL",
        `tl.${call}: shape must be a non-empty list of positive integers, got ${JSON.stringify(shape)}.`,
      );
    }
  }

  private checkDtype(call: string, dtype: Dtype): void {
    if (!isDtype(dtype)) {
      throw this._error(
        "TL_INVALID_CALL",
        `tl.${call}: unknown dtype ${JSON.stringify(dtype)}; use f32, f16, bf16, i8 or i32.`,
      );
    }
  }

  private checkDirection(call: string, direction: string): void {
    if (typeof direction !== "string" || direction.length === 0) {
      throw this._error(
        "TL_INVALID_CALL",
        `tl.${call}: direction must be a non-empty string, got ${String(direction)}.`,
      );
    }
  }

  /** Loads and stores move between TCM and HBM/SRAM. */
  private checkDeviceSide(call: string, address: number): void {
    let space: string;
    try {
      space = decodeAddress(address).space;
    } catch (error) {
      throw this._error("TL_INVALID_CALL", `tl.${call}: ${hex(address)} is not a device address.`, error);
    }
    if (space === "tcm") {
      throw this._error(
        "TL_INVALID_CALL",
        `tl.${call}: ${hex(address)} is in TCM; tl.load and tl.store move data between HBM or SRAM and the PE's TCM.`,
      );
    }
  }

  /** Rows, row bytes and source/destination row stride (bytes) of a load/store. */
  private block(call: string, shape: readonly number[], dtype: Dtype, stride: number | undefined) {
    const size = DTYPE_BYTES[dtype];
    const cols = shape[shape.length - 1] as number;
    const rows = shapeSize(shape) / cols;
    const rowBytes = cols * size;
    if (stride === undefined) return { rows: 1, rowBytes: rows * rowBytes, stride: rows * rowBytes };
    if (shape.length !== 2 || !Number.isInteger(stride) || stride < cols) {
      throw this._error(
        "TL_INVALID_CALL",
        `tl.${call}: stride ${stride} needs a 2-D shape and a whole number of elements >= the row length ${cols}; got shape ${formatShape(shape)}.`,
      );
    }
    return { rows, rowBytes, stride: stride * size };
  }

  /**
   * Device memory is typed by the tensor allocated there: a load, store or composite operand of
   * another element type would reinterpret its bytes. Refused with `message(tensor)` naming what
   * to do; allocations without a dtype (and command-list mode) are not checked.
   */
  private checkElementType(address: number, dtype: Dtype, message: (tensor: TypedTensor) => string): void {
    const tensor = this.memory?.tensorAt?.(address) ?? null;
    if (tensor === null || tensor.dtype === null || tensor.dtype === dtype) return;
    const typed: TypedTensor = {
      ...tensor,
      dtype: tensor.dtype,
      toString: () =>
        `${tensor.name} (${tensor.dtype}${tensor.shape !== null ? ` ${formatShape(tensor.shape)}` : ""})`,
    };
    throw this._error("TL_INVALID_CALL", message(typed));
  }

  /** A composite math op gets the tensors and scalars it needs (the scheduler would refuse it later). */
  private checkCompositeMathOperands(
    op: string,
    arity: number,
    tensors: number,
    scalars: readonly number[],
  ): void {
    const fail = (why: string) => {
      throw this._error("TL_INVALID_CALL", `tl.composite("math", { mathOp: "${op}" }): ${why}`);
    };
    if (scalars.some((value) => typeof value !== "number")) fail("scalars must be numbers.");
    if (arity === 3) fail("takes three tensors and cannot run as a composite; use tl.load and the tl call.");
    if (op === "clamp" && (tensors !== 1 || scalars.length !== 2)) {
      fail(`needs one input and scalars [lo, hi], got ${tensors} input(s) and ${scalars.length} scalar(s).`);
    }
    if (arity === 2 && !(tensors === 2 || (tensors === 1 && scalars.length >= 1))) {
      fail(
        `needs b or a scalar (scalars: [value]), got ${tensors} input(s) and ${scalars.length} scalar(s).`,
      );
    }
    if (arity === 1 && tensors !== 1) fail(`takes one input, got ${tensors}.`);
  }

  /** Checks a contiguous operand or output of a composite: inside an allocation, of its element type. */
  private checkStreamed(
    role: string,
    address: number,
    elements: number,
    dtype: Dtype,
    fix: (tensor: TypedTensor) => string,
  ): void {
    if (this.memory === null) return;
    const bytes = elements * DTYPE_BYTES[dtype];
    this.memoryCall(() =>
      (this.memory as KernelMemory).check(address, bytes, `tl.composite ${role} at ${hex(address)}`),
    );
    this.checkElementType(
      address,
      dtype,
      (t) =>
        `tl.composite ${role} is ${dtype} but ${t} holds ${t.dtype}: its bytes would be reinterpreted. ${fix(t)}`,
    );
  }

  private checkBlockAccess(
    address: number,
    block: { rows: number; rowBytes: number; stride: number },
    what: string,
  ) {
    const span = (block.rows - 1) * block.stride + block.rowBytes;
    this.memoryCall(() => (this.memory as KernelMemory).check(address, span, what));
  }

  /** Validates the source now; returns a reader for completion time. */
  private readBlock(
    address: number,
    block: { rows: number; rowBytes: number; stride: number },
    what: string,
  ) {
    this.checkBlockAccess(address, block, what);
    return (): Uint8Array => {
      const memory = this.memory as KernelMemory;
      if (block.rows === 1) return this.memoryCall(() => memory.read(address, block.rowBytes, what));
      const out = new Uint8Array(block.rows * block.rowBytes);
      for (let row = 0; row < block.rows; row++) {
        out.set(
          this.memoryCall(() => memory.read(address + row * block.stride, block.rowBytes, what)),
          row * block.rowBytes,
        );
      }
      return out;
    };
  }

  private writeBlock(
    address: number,
    block: { rows: number; rowBytes: number; stride: number },
    bytes: Uint8Array,
    what: string,
  ) {
    const memory = this.memory as KernelMemory;
    for (let row = 0; row < block.rows; row++) {
      const slice = bytes.subarray(row * block.rowBytes, (row + 1) * block.rowBytes);
      this.memoryCall(() => memory.write(address + row * block.stride, slice, what));
    }
  }

  /** Runs a memory call, re-raising its KbError located at this kernel instance. */
  private memoryCall<T>(call: () => T): T {
    try {
      return call();
    } catch (error) {
      if (error instanceof KbError) throw this._error(error.code, error.detail, error);
      throw error;
    }
  }

  /** Checks a handle belongs to this kernel instance and is still usable. */
  private own(call: string, handle: TensorHandle): void {
    if (!(handle instanceof TensorHandle)) {
      throw this._error("TL_INVALID_CALL", `tl.${call}: expected a TensorHandle, got ${String(handle)}.`);
    }
    if (handle.tl !== this) {
      throw this._error(
        "TL_INVALID_CALL",
        `tl.${call}: ${handle.describe()} belongs to another kernel instance.`,
      );
    }
    if (handle._released) {
      throw this._error(
        "TL_INVALID_CALL",
        `tl.${call}: ${handle.describe()} from tl.${handle.op} was released by tl.scratchRelease; its TCM may hold other data now.`,
      );
    }
  }

  /**
   * The TCM form of an operand: writes a constant's values first (a PE_MATH fill/iota). Only a
   * GEMM reads a transposed view (`tl.trans`) as what it means; every other command would read
   * its bytes in stored order, so it is refused unless `transposedOk`.
   */
  private async inTcm(call: string, handle: TensorHandle, transposedOk = false): Promise<TensorHandle> {
    if (handle.space !== "tcm") {
      throw this._error(
        "TL_INVALID_CALL",
        `tl.${call}: ${handle.describe()} from tl.${handle.op} is not in TCM; tl.load it first.`,
      );
    }
    if (handle.transposed && !transposedOk) {
      throw this._error(
        "TL_INVALID_CALL",
        `tl.${call}: ${handle.describe()} is a transposed view (tl.trans): its bytes are stored in the other order and only tl.dot and tl.composite("gemm") read them transposed. Load the data in the layout you need (tl.load of the transposed matrix), or keep the transpose for the GEMM.`,
      );
    }
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
      scalars: [iota ? data.getFlat(0) : data.size > 0 ? data.getFlat(0) : 0],
    };
    await this.dispatch();
    await this.issue(command);
    handle._materialised = true;
    if (this.memory !== null)
      this.memoryCall(() =>
        (this.memory as KernelMemory).write(handle.address, data.bytes, `tl.${handle.op} in TCM`),
      );
  }

  /**
   * An HBM address a composite can stream from: a ref, or the source of a load that read
   * contiguous rows. Composite GEMMs read a transposed operand as such (`transposeA/B`); other
   * composites refuse one (`transposedOk` false).
   */
  private streamed(call: string, handle: TensorHandle, transposedOk = false): number {
    if (handle.transposed && !transposedOk) {
      throw this._error(
        "TL_INVALID_CALL",
        `tl.${call}: ${handle.describe()} is a transposed view (tl.trans); only a composite GEMM streams a transposed operand.`,
      );
    }
    if (handle.space === "hbm") return handle.address;
    if (handle.source !== null && handle.sourceStride !== null) {
      throw this._error(
        "TL_INVALID_CALL",
        `tl.${call}: ${handle.describe()} was loaded with stride ${handle.sourceStride} from 0x${handle.source.toString(16)}; composite ops stream contiguous matrices from device memory, so they cannot read it again there. Pass a tl.ref of a contiguous matrix, or use tl.dot on the loaded tiles.`,
      );
    }
    if (handle.source !== null && handle.rowStride === handle.shape[handle.shape.length - 1])
      return handle.source;
    throw this._error(
      "TL_INVALID_CALL",
      `tl.${call}: ${handle.describe()} from tl.${handle.op} is not in device memory; composite ops stream their operands from HBM (use tl.ref).`,
    );
  }

  private epilogue(steps: readonly EpilogueSpec[]): EpilogueOp[] {
    return steps.map((step, i) => {
      const op = step?.op;
      if (typeof op !== "string" || !EPILOGUE_OPS.has(op)) {
        throw this._error(
          "TL_INVALID_CALL",
          `tl.composite epilogue[${i}]: unknown op ${JSON.stringify(op)}; elementwise ops: ${[...EPILOGUE_OPS].join(", ")}.`,
        );
      }
      const info = MATH_OPS[op] as (typeof MATH_OPS)[string];
      if (info.arity === 2 && !(SCALAR_BINARY.has(op) && typeof step.scalar === "number")) {
        throw this._error(
          "TL_INVALID_CALL",
          `tl.composite epilogue[${i}] (${op}): a binary op needs "scalar".`,
        );
      }
      if (info.arity > 2 || op === "clamp") {
        throw this._error(
          "TL_INVALID_CALL",
          `tl.composite epilogue[${i}] (${op}): not available as an epilogue step.`,
        );
      }
      if (step.scope !== undefined && step.scope !== "k_tile" && step.scope !== "output_tile") {
        throw this._error(
          "TL_INVALID_CALL",
          `tl.composite epilogue[${i}] (${op}): scope must be "k_tile" or "output_tile", got ${JSON.stringify(step.scope)}.`,
        );
      }
      return {
        op,
        ...(step.scope !== undefined ? { scope: step.scope } : {}),
        ...(step.scalar !== undefined ? { scalar: step.scalar } : {}),
      };
    });
  }

  private unary(op: (typeof UNARY)[number], x: TensorHandle, options?: MathOptions): Promise<TensorHandle> {
    return this.math(op, [x], [], { out: options?.out });
  }

  private binary(
    op: string,
    a: TensorHandle,
    b: TensorHandle | number,
    options?: MathOptions,
  ): Promise<TensorHandle> {
    if (typeof b === "number") {
      if (!Number.isFinite(b))
        throw this._error("TL_INVALID_CALL", `tl.${op}: scalar must be finite, got ${b}.`);
      return this.math(op, [a], [b], { out: options?.out });
    }
    return this.math(op, [a, b], [], { out: options?.out });
  }

  private math(
    op: string,
    inputs: readonly TensorHandle[],
    scalars: readonly number[],
    options: { dtype?: Dtype; axis?: number; inputDtype?: Dtype; out?: TensorHandle | undefined } = {},
  ): Promise<TensorHandle> {
    return this.call(op, async () => {
      const { dtype, axis, inputDtype } = options;
      for (const input of inputs) this.own(op, input);
      const first = inputs[0] as TensorHandle;
      for (const input of inputs) {
        if (formatShape(input.shape) !== formatShape(first.shape)) {
          throw this._error(
            "TL_INVALID_CALL",
            `tl.${op}: operand shapes differ: ${inputs.map((h) => formatShape(h.shape)).join(", ")} (no broadcasting; reshape or use a scalar).`,
          );
        }
        if (op !== "where" && op !== "cast" && input.dtype !== first.dtype) {
          throw this._error(
            "TL_INVALID_CALL",
            `tl.${op}: operand dtypes differ: ${inputs.map((h) => h.dtype).join(", ")}; cast first.`,
          );
        }
      }
      const outDtype = dtype ?? first.dtype;
      const rank = first.shape.length;
      let outShape = [...first.shape];
      let realAxis: number | undefined;
      const info = MATH_OPS[op];
      if (info !== undefined && info.shape !== "elementwise") {
        const a = axis ?? -1;
        if (!Number.isInteger(a) || a < -rank || a >= rank) {
          throw this._error(
            "TL_INVALID_CALL",
            `tl.${op}: axis ${a} is out of range for ${formatShape(first.shape)}.`,
          );
        }
        realAxis = a < 0 ? a + rank : a;
        if (info.shape === "reduce") outShape = outShape.map((size, i) => (i === realAxis ? 1 : size));
      }
      const tcm: TensorHandle[] = [];
      for (const input of inputs) tcm.push(await this.inTcm(op, input));
      const out =
        options.out === undefined
          ? this.scratchHandle(op, "compute", outShape, outDtype)
          : await this.into(op, options.out, "compute", outShape, outDtype);
      await this.dispatch();
      await this.issue({
        kind: "math",
        op,
        inputs: tcm.map((h) => h.address),
        shape: [...first.shape],
        out: out.address,
        dtype: outDtype,
        ...(realAxis !== undefined ? { axis: realAxis } : {}),
        ...(scalars.length > 0 ? { scalars: [...scalars] } : {}),
        ...(inputDtype !== undefined && inputDtype !== outDtype ? { inputDtype } : {}),
      });
      this.memory?.markPending?.(out.address, out.nbytes);
      return out;
    });
  }

  private async receive(
    call: string,
    direction: string | null,
    options: RecvOptions,
    consume: boolean,
    async: boolean,
  ): Promise<{ index: number; finish: () => TensorHandle }> {
    if (direction !== null) this.checkDirection(call, direction);
    const shape = options?.shape;
    this.checkShape(call, shape);
    const dtype = options.dtype ?? "f16";
    this.checkDtype(call, dtype);
    const nbytes = shapeSize(shape) * DTYPE_BYTES[dtype];
    let received: { slot: number; hasData: boolean } | null = null;
    await this.dispatch();
    const issued = this.sink.issue({
      kind: "ipcq_recv",
      direction,
      bytes: nbytes,
      dtype,
      mode: options.dstAddr !== undefined ? "copy_to_dst" : "return_slot",
      dst: options.dstAddr ?? null,
      consume,
      ...(async ? { async: true } : {}),
      onReceived: (slot, hasData) => {
        received = { slot, hasData };
      },
    });
    await issued.done;
    const finish = () => this.receivedHandle(call, shape, dtype, options.dstAddr, received);
    return { index: issued.index, finish };
  }

  /** The handle of a completed receive (a placeholder in command-list mode). */
  private receivedHandle(
    call: string,
    shape: readonly number[],
    dtype: Dtype,
    dstAddr: number | undefined,
    received: { slot: number; hasData: boolean } | null,
  ): TensorHandle {
    const at = (address: number) =>
      this.handle({ op: call, origin: "recv", shape, dtype, space: "tcm", address });
    const handle =
      dstAddr !== undefined
        ? at(dstAddr)
        : received !== null
          ? at(received.slot)
          : this.scratchHandle(call, "recv", shape, dtype);
    const memory = this.memory;
    if (memory !== null && received !== null) {
      if (received.hasData) {
        const bytes = this.memoryCall(() => memory.read(received.slot, handle.nbytes, `tl.${call}`));
        // Written again through this memory so the bytes count as known where they are read.
        this.memoryCall(() => memory.write(dstAddr ?? received.slot, bytes, `tl.${call}`));
      } else {
        // The sender's tile was a pending compute result: so is the payload.
        memory.markPending?.(handle.address, handle.nbytes);
      }
    }
    return handle;
  }
}

function ignore(): void {}

function hex(address: number): string {
  return `0x${address.toString(16)}`;
}

function isZeros(handle: TensorHandle): boolean {
  const data = handle._data;
  if (data === null) return false;
  for (let i = 0; i < data.size; i++) if (data.getFlat(i) !== 0) return false;
  return true;
}

function transpose(tensor: Tensor): Tensor {
  const shape = [...tensor.shape];
  const rank = shape.length;
  const rows = shape[rank - 2] as number;
  const cols = shape[rank - 1] as number;
  const batch = tensor.size / (rows * cols);
  const out = Tensor.zeros([...shape.slice(0, rank - 2), cols, rows], tensor.dtype);
  const size = DTYPE_BYTES[tensor.dtype];
  for (let b = 0; b < batch; b++) {
    for (let r = 0; r < rows; r++) {
      for (let c = 0; c < cols; c++) {
        const from = (b * rows * cols + r * cols + c) * size;
        const to = (b * rows * cols + c * rows + r) * size;
        out.bytes.set(tensor.bytes.subarray(from, from + size), to);
      }
    }
  }
  return out;
}
