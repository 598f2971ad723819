import type { TLContext } from "./context.js";
import { type CompletionHandle, LoadFuture, RecvFuture, type TensorHandle } from "./handles.js";

// The control calls of `tl`: waiting for async commands, and scalar work on the PE_CPU.

/** What `tl.wait` waits for: a composite, an async receive or an async load. */
export type Waitable = CompletionHandle | RecvFuture | LoadFuture;

/** The control calls of `tl` (installed on `TLContext` by context.ts). */
export interface ControlCalls {
  /**
   * Waits for an async load (`LoadFuture`) or receive (`RecvFuture`) and gives its handle; for a
   * composite (`CompletionHandle`); or, without an argument, for every outstanding async command
   * (an async load it completes then gives its handle to `tl.wait(future)` at once). Timing
   * only: a composite's results stay pending in phase 1. Waiting twice for one future, or for
   * another kernel instance's, is `TL_INVALID_CALL`.
   */
  wait(handle: LoadFuture | RecvFuture): Promise<TensorHandle>;
  wait(handle?: CompletionHandle): Promise<undefined>;
  wait(handle?: Waitable): Promise<TensorHandle | undefined>;

  /** Keeps the PE_CPU busy for `n` cycles (scalar work of the kernel). */
  cycles(n: number): Promise<void>;
}

function wait(this: TLContext, handle?: Waitable): Promise<TensorHandle | undefined> {
  return this._call("wait", async (site) => {
    if (handle !== undefined) site.withArguments(String(handle));
    const scope = this._scope;
    if (handle === undefined) {
      await scope.dispatch();
      await scope.issue({ kind: "wait" });
      const outstanding = [...this._outstanding];
      this._outstanding.clear();
      for (const pending of outstanding) if (pending instanceof LoadFuture) pending._land();
      return undefined;
    }
    if (handle.tl !== this) {
      throw this._error("TL_INVALID_CALL", `tl.wait: ${handle} belongs to another kernel instance.`);
    }
    // Completed by a `tl.wait()` without an argument: nothing left to wait for.
    if (handle instanceof LoadFuture && handle._state === "landed") return handle._take();
    if (!this._outstanding.has(handle)) {
      throw this._error("TL_INVALID_CALL", `tl.wait: ${handle} was already waited for.`);
    }
    this._outstanding.delete(handle);
    await scope.dispatch();
    await scope.issue({ kind: "wait", commands: [handle.commandIndex] });
    if (handle instanceof LoadFuture) {
      handle._land();
      return handle._take();
    }
    return handle instanceof RecvFuture ? handle._finish() : undefined;
  });
}

export const controlCalls: ControlCalls & ThisType<TLContext> = {
  wait: wait as ControlCalls["wait"],

  cycles(n) {
    return this._call("cycles", async () => {
      if (!(Number.isFinite(n) && n >= 0)) {
        throw this._error("TL_INVALID_CALL", `tl.cycles(${n}): needs a finite number >= 0.`);
      }
      await this._scope.issue({ kind: "cycles", cycles: n });
    });
  },
};
