import { KbError, type KbErrorCode } from "@kb/errors";
import type { Tensor } from "@kb/tensor";
import { type AtomicCalls, atomicCalls } from "./atomic-calls.js";
import { CallScope } from "./call-scope.js";
import { CallSite, type EntryFunction } from "./call-site.js";
import { type ComputeCalls, computeCalls } from "./compute-calls.js";
import { type ControlCalls, controlCalls } from "./control-calls.js";
import { type DotScaledCalls, dotScaledCalls } from "./dot-scaled-calls.js";
import { type CompletionHandle, type LoadFuture, type RecvFuture, TensorHandle } from "./handles.js";
import { type IpcqCalls, ipcqCalls } from "./ipcq-calls.js";
import type { KernelMemory } from "./kernel-memory.js";
import { type MathCalls, mathCalls } from "./math-calls.js";
import { type MetadataCalls, metadataCalls } from "./metadata-calls.js";
import { type MovementCalls, movementCalls } from "./movement-calls.js";
import type { CommandSink, KernelPlacement, TLOptions } from "./options.js";
import { takeSiteTag } from "./site-tags.js";
import { type SplitJoinCalls, splitJoinCalls } from "./split-join-calls.js";
import { valuesOf } from "./values.js";

/**
 * The primitives of `tl`, one module per family: each declares its calls (signature and doc) in
 * an interface and implements them in an object installed on `TLContext.prototype` below.
 */
const FAMILIES = [
  metadataCalls,
  movementCalls,
  computeCalls,
  mathCalls,
  ipcqCalls,
  controlCalls,
  splitJoinCalls,
  atomicCalls,
  dotScaledCalls,
] as const;

// Declaration merging: the class gets these methods from the families' objects (installed on its
// prototype at the end of this module), and this interface gives them their types and docs.
export interface TLContext
  extends MetadataCalls,
    MovementCalls,
    ComputeCalls,
    MathCalls,
    IpcqCalls,
    ControlCalls,
    SplitJoinCalls,
    AtomicCalls,
    DotScaledCalls {}

/**
 * The `tl` object a kernel receives (ADR-0046): one per kernel instance (PE and launch). Metadata
 * calls (`programId`, `ref`, `zeros`, `trans`, ...) are synchronous; calls that emit a command
 * return a promise and must be awaited before the next call.
 *
 * The calls live in one module per family: metadata-calls.ts (programId, numPrograms, cdiv, ref,
 * zeros, empty, full, arange, view, trans, scratch marks), movement-calls.ts (load, loadAsync, store),
 * compute-calls.ts (dot, composite), math-calls.ts (the math ops, made from the op table of
 * @kb/oplog), ipcq-calls.ts (send, recv, recvNoConsume, recvAsync) and control-calls.ts (wait,
 * cycles). This class holds the kernel instance's state and the call tracking every call that
 * emits commands goes through (`_call`); the calls' work is in movement.ts, compute.ts,
 * composite.ts and ipcq.ts over a `CallScope` (call-scope.ts), their argument checks in
 * validate.ts, device-memory access in device-access.ts and phase-1 values in values.ts.
 */
export class TLContext {
  readonly kernel: string;
  readonly placement: KernelPlacement;
  readonly dispatchCycles: number;
  /** @internal */
  readonly memory: KernelMemory | null;
  /** @internal The command sink, the handles and the scratch the calls share (call-scope.ts). */
  readonly _scope: CallScope;
  /** @internal Async commands (composites, async receives, async loads) not waited for yet. */
  readonly _outstanding = new Set<CompletionHandle | RecvFuture | LoadFuture>();
  private nextCompletion = 0;
  /** The tl call that has been made and has not completed yet (at most one: calls are awaited). */
  private inFlight: CallSite | null = null;
  /** The tl call whose synchronous part is running now (its argument checks), or null. */
  private current: string | null = null;
  /** The function the kernel called to make the {@link current} call (its public method), if known. */
  private entry: EntryFunction | null = null;
  /** The site tag of the {@link current} call (site-tags.ts), or -1 when it has none. */
  private entryTag = -1;
  /** The first error a tl call of this kernel raised (it fails the kernel even if not awaited). */
  private firstFailure: unknown = null;

  /** @internal Made by a KernelRunner or `commandList`. */
  constructor(options: TLOptions, sink: CommandSink) {
    this.kernel = options.kernel;
    this.placement = options.placement;
    this.dispatchCycles = options.dispatchCycles ?? 0;
    this.memory = options.memory ?? null;
    this._scope = new CallScope(this, sink, options.scratch, (init) => new TensorHandle(this, init));
  }

  /** Ceiling division (Triton's `tl.cdiv`). */
  static cdiv(a: number, b: number): number {
    return Math.ceil(a / b);
  }

  /** @internal The id of the next completion handle or receive future of this kernel instance. */
  _completionId(): number {
    return this.nextCompletion++;
  }

  /**
   * @internal A KbError located at this kernel instance (kernel, PE, simulated time) and, while a
   * tl call runs, at that call's line in the kernel's source.
   */
  _error(
    code: KbErrorCode,
    detail: string,
    cause?: unknown,
    site: CallSite | null = this._currentCall(),
  ): KbError {
    const now = this._scope.sink.now();
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
   * @internal The tl call being made now (its synchronous part: its site is captured now, from
   * the stack of the call), else the one in flight, or null.
   */
  _currentCall(): CallSite | null {
    return this.current !== null ? CallSite.captureInCall(this.current) : this.inFlight;
  }

  /**
   * @internal {@link _currentCall}, at a lookup's cost when the runner keeps a site cache and the
   * call's public method is known (`CallSite.captureCaller`: the frame below that method).
   */
  _currentCallFound(): CallSite | null {
    const sites = this._scope.sink.sites;
    if (this.current === null || sites === undefined || this.entry === null) return this._currentCall();
    return CallSite.captureCaller(this.current, sites, this.entry, this.entryTag) ?? this._currentCall();
  }

  /** @internal The tl call made and not completed yet (what the kernel waits on), or null. */
  _callInFlight(): CallSite | null {
    return this.inFlight;
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
   * @internal Runs one tl call that emits commands: records where it was made, refuses it while
   * another call is still in flight (a missing `await`), and notes its failure so the kernel fails
   * even when nobody awaits it. The returned promise never counts as an unhandled rejection.
   */
  _call<T>(name: string, body: (site: CallSite) => Promise<T>): Promise<T> {
    const sites = this._scope.sink.sites;
    const site =
      sites === undefined
        ? CallSite.capture(name)
        : this.current === null
          ? CallSite.captureLocated(name, sites)
          : CallSite.captureLocated(name, sites, this.entry, this.entryTag);
    const earlier = this.inFlight;
    let promise: Promise<T>;
    if (earlier !== null) {
      const error = this._error(
        "KERNEL_FAILED",
        `${earlier.describe()} was still in flight when ${site.describe()} was issued: await every tl call before making the next one (\`await tl.${earlier.call}(...)\`); for work that overlaps, use the async forms (tl.composite, tl.recvAsync, tl.loadAsync) and tl.wait.`,
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

  /**
   * @internal Runs `call` on `self` with `args` as the tl call `name` (every public call goes
   * through here, see the end of this module, and `handle.data`): an error raised while it runs
   * synchronously (the argument checks of `reshape`, `where`'s dtypes before its command) names
   * the kernel's line, found then in the stack below this frame (nothing is captured when no
   * error is raised). A tl call made by another (`zeros` calls `full`) keeps the outer call's name.
   */
  _located<T, A extends unknown[]>(
    name: string,
    call: (...args: A) => T,
    self: unknown,
    args: A,
    entry: EntryFunction | null = null,
  ): T {
    // A tagged call's tag is taken by the call entered next, or dropped (site-tags.ts).
    const tag = takeSiteTag(this, name);
    if (this.current !== null) return call.apply(self, args);
    this.current = name;
    this.entry = entry;
    this.entryTag = entry === null ? -1 : tag;
    try {
      return call.apply(self, args);
    } finally {
      this.current = null;
      this.entry = null;
      this.entryTag = -1;
    }
  }

  private noteFailure(error: unknown): void {
    if (this.firstFailure === null) this.firstFailure = error;
  }
}

function ignore(): void {}

/** `call` as the tl call `name`: run through `TLContext._located`, so its errors name the kernel's line. */
function located(name: string, call: (...args: unknown[]) => unknown) {
  // The method itself is the call's entry: the frame below it is the code that called tl.
  const method = function (this: TLContext, ...args: unknown[]): unknown {
    return this._located(name, call, this, args, method);
  };
  return method;
}

// The calls become methods of the class, as if written in it: not enumerable, getters kept, each
// call located (above).
for (const family of FAMILIES) {
  for (const [name, descriptor] of Object.entries(Object.getOwnPropertyDescriptors(family))) {
    const value: unknown = descriptor.value;
    Object.defineProperty(TLContext.prototype, name, {
      ...descriptor,
      ...(typeof value === "function"
        ? { value: located(name, value as (...args: unknown[]) => unknown) }
        : {}),
      enumerable: false,
    });
  }
}

/** The names of tl's calls, for the "did you mean" of a misspelt one. */
export const TL_CALL_NAMES: readonly string[] = FAMILIES.flatMap((family) => Object.keys(family)).sort();
