import { KbError, type KbErrorCode } from "@kb/errors";
import { DTYPE_BYTES, type Dtype, shapeSize, Tensor } from "@kb/tensor";
import { CallScope } from "./call-scope.js";
import { CallSite } from "./call-site.js";
import { compositeCommand } from "./composite.js";
import { type MathCallOptions, runDot, runMath } from "./compute.js";
import { checkDeviceSide } from "./device-access.js";
import { CompletionHandle, RecvFuture, TensorHandle } from "./handles.js";
import { runReceive, runSend } from "./ipcq.js";
import type { KernelMemory } from "./kernel-memory.js";
import { runLoad, runStore } from "./movement.js";
import type {
  BlockOptions,
  CommandSink,
  CompositeOptions,
  DotOptions,
  KernelPlacement,
  LoadOptions,
  MathOptions,
  Pointer,
  RecvOptions,
  TLOptions,
} from "./options.js";
import { checkAxis, checkDtype, checkOwned, checkShape, checkView, pointerAddress } from "./validate.js";
import { swapLast, transpose, valuesOf } from "./values.js";

const UNARY = ["exp", "log", "sqrt", "abs", "sigmoid", "cos", "sin", "relu"] as const;

/**
 * The `tl` object a kernel receives (ADR-0046): one per kernel instance (PE and launch). Metadata
 * calls (`programId`, `ref`, `zeros`, `trans`, ...) are synchronous; calls that emit a command
 * return a promise and must be awaited before the next call.
 *
 * This class is the API and the call tracking (`call`); the calls' work lives in movement.ts,
 * compute.ts, composite.ts and ipcq.ts over a `CallScope` (call-scope.ts), their argument checks
 * in validate.ts, device-memory access in device-access.ts and phase-1 values in values.ts.
 */
export class TLContext {
  readonly kernel: string;
  readonly placement: KernelPlacement;
  readonly dispatchCycles: number;
  /** @internal */
  readonly memory: KernelMemory | null;
  /** The command sink, the handles and the scratch the calls share (call-scope.ts). */
  private readonly scope: CallScope;
  private nextCompletion = 0;
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
    this.scope = new CallScope(this, sink, options.scratch, (init) => new TensorHandle(this, init));
  }

  // ---------------------------------------------------------------------------------------------
  // Index and metadata (synchronous, no command)

  /** Axis 0: the PE's index in its cube's part of the grid; 1: the cube's; 2: the SIP's. */
  programId(axis = 0): number {
    return this.placement.programId[checkAxis(this, axis, "programId")];
  }

  /** Axis 0: PEs per cube in the grid; 1: cubes per SIP; 2: SIPs. */
  numPrograms(axis = 0): number {
    return this.placement.numPrograms[checkAxis(this, axis, "numPrograms")];
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
    checkShape(this, "ref", shape);
    checkDtype(this, "ref", dtype);
    return this.scope.handle({
      op: "ref",
      origin: "ref",
      shape,
      dtype,
      space: "hbm",
      address: pointerAddress(this, ptr, "ref"),
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
    checkShape(this, "empty", shape);
    checkDtype(this, "empty", dtype);
    const handle = this.scope.scratchHandle("empty", "compute", shape, dtype);
    this.memory?.markPending?.(handle.address, handle.nbytes);
    return handle;
  }

  /** A TCM tensor filled with `value` (written to TCM the first time a command reads it). */
  full(shape: readonly number[], value: number, dtype: Dtype = "f16", op = "full"): TensorHandle {
    checkShape(this, op, shape);
    checkDtype(this, op, dtype);
    const handle = this.scope.scratchHandle(op, "constant", shape, dtype);
    handle._data = Tensor.full(shape, value, dtype);
    return handle;
  }

  /** `[start, end)` as a 1-D TCM tensor (written to TCM the first time a command reads it). */
  arange(start: number, end: number, dtype: Dtype = "i32"): TensorHandle {
    if (!Number.isInteger(start) || !Number.isInteger(end) || end <= start) {
      throw this._error("TL_INVALID_CALL", `tl.arange(${start}, ${end}): needs integers with end > start.`);
    }
    const handle = this.scope.scratchHandle("arange", "constant", [end - start], dtype);
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
    checkView(this, x, start, shape);
    const bytes = DTYPE_BYTES[x.dtype];
    const handle = this.scope.handle({
      op: "view",
      origin: x.origin,
      shape,
      dtype: x.dtype,
      space: "tcm",
      address: x.address + start * bytes,
      scratchOffset: x.scratchOffset,
    });
    if (x._data !== null) {
      const end = start + shapeSize(shape);
      handle._data = new Tensor(shape, x.dtype, x._data.bytes.slice(start * bytes, end * bytes));
    }
    // A constant is written to TCM as a whole (its root) the first time any part is read or written.
    handle._root = x._root ?? x;
    return handle;
  }

  /** The last two dimensions swapped; same bytes (a GEMM reads it transposed). */
  trans(x: TensorHandle): TensorHandle {
    checkOwned(this, "trans", x);
    if (x.shape.length < 2) {
      throw this._error("TL_INVALID_CALL", `tl.trans(${x.describe()}): needs at least 2 dimensions.`);
    }
    const handle = this.scope.handle({
      op: "trans",
      origin: x.origin,
      shape: swapLast(x.shape),
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
    return this.scope.scratch.cursor;
  }

  /**
   * Frees the scratch allocated after `mark` (from `scratchMark`), so a loop over tiles can reuse
   * TCM. Handles allocated after the mark become unusable: passing one to a later call is an error.
   */
  scratchRelease(mark: number): void {
    this.scope.scratch.release(this, mark);
  }

  /** Bytes of scratch in use and available. */
  get scratchUsage(): { readonly used: number; readonly bytes: number } {
    return { used: this.scope.scratch.cursor, bytes: this.scope.scratch.bytes };
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
    return this.call("load", (site) => runLoad(this.scope, site, ptr, shape, dtype, options));
  }

  /**
   * Stores `value` (a TCM handle) at `ptr` through PE_DMA. Visible at issue time in runner mode
   * when the handle has data; a pending compute result only binds the destination (its values
   * arrive in phase 2).
   */
  store(ptr: Pointer, value: TensorHandle, options: BlockOptions = {}): Promise<void> {
    return this.call("store", () => runStore(this.scope, ptr, value, options));
  }

  // ---------------------------------------------------------------------------------------------
  // GEMM and composite

  /** `a @ b` on PE_GEMM; both in TCM, `(M, K) x (K, N)`. With `acc`, adds into it. */
  dot(a: TensorHandle, b: TensorHandle, options: DotOptions | TensorHandle = {}): Promise<TensorHandle> {
    const opts: DotOptions = options instanceof TensorHandle ? { acc: options } : options;
    return this.call("dot", () => runDot(this.scope, a, b, opts));
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
      checkOwned(this, "composite", a);
      if (b !== null && b !== undefined) checkOwned(this, "composite", b);
      const out = pointerAddress(this, options.outPtr, "composite outPtr");
      checkDeviceSide(this, "composite outPtr", out);
      const { command, outBytes } = compositeCommand(this, op, a, b, out, options);
      await this.scope.dispatch();
      const issued = this.scope.sink.issue(command);
      // The composite computes: what it writes is pending in phase 1.
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
    checkDtype(this, "cast", dtype);
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
    return this.call("send", () => runSend(this.scope, direction, src));
  }

  /**
   * Receives from `direction` (where the data comes from: what the west neighbour sends "east"
   * arrives from "west"), blocking until a payload arrived and paying the slot read. With
   * `dstAddr` the payload is copied there and the slot is freed at once; else the handle is the
   * slot itself, the kernel's until its next receive from that direction (or its end).
   */
  recv(direction: string | null, options: RecvOptions): Promise<TensorHandle> {
    return this.call("recv", async () => {
      const { finish } = await runReceive(this.scope, "recv", direction, options, true, false);
      return finish();
    });
  }

  /** DIAGNOSTIC ONLY: `recv` without the slot-read latency; production kernels must use `recv`. */
  recvNoConsume(direction: string | null, options: RecvOptions): Promise<TensorHandle> {
    return this.call("recvNoConsume", async () => {
      const { finish } = await runReceive(this.scope, "recvNoConsume", direction, options, false, false);
      return finish();
    });
  }

  /** A non-blocking receive: `await tl.wait(future)` gives the handle. */
  recvAsync(direction: string, options: RecvOptions): Promise<RecvFuture> {
    return this.call("recvAsync", async () => {
      const { index, finish } = await runReceive(this.scope, "recvAsync", direction, options, true, true);
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
        await this.scope.dispatch();
        await this.scope.issue({ kind: "wait" });
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
      await this.scope.dispatch();
      await this.scope.issue({ kind: "wait", commands: [handle.commandIndex] });
      return handle instanceof RecvFuture ? handle._finish() : undefined;
    });
  }

  /** Keeps the PE_CPU busy for `n` cycles (scalar work of the kernel). */
  cycles(n: number): Promise<void> {
    return this.call("cycles", async () => {
      if (!(Number.isFinite(n) && n >= 0)) {
        throw this._error("TL_INVALID_CALL", `tl.cycles(${n}): needs a finite number >= 0.`);
      }
      await this.scope.issue({ kind: "cycles", cycles: n });
    });
  }

  // ---------------------------------------------------------------------------------------------
  // Internals

  /**
   * @internal A KbError located at this kernel instance (kernel, PE, simulated time) and, while a
   * tl call runs, at that call's line in the kernel's source.
   */
  _error(code: KbErrorCode, detail: string, cause?: unknown, site: CallSite | null = this.inFlight): KbError {
    const now = this.scope.sink.now();
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

  /** @internal The values of `handle` as phase 1 knows them now, or null (see values.ts). */
  _valuesOf(handle: TensorHandle): Tensor | null {
    return valuesOf(this, handle);
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
  private call<T>(name: string, body: (site: CallSite) => Promise<T>): Promise<T> {
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
      promise = body(site).then(
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
    options: MathCallOptions,
  ): Promise<TensorHandle> {
    return this.call(op, () => runMath(this.scope, op, inputs, scalars, options));
  }
}

function ignore(): void {}
