import type { TLContext } from "./context.js";
import { type CompletionHandle, RecvFuture, type TensorHandle } from "./handles.js";

// The control calls of `tl`: waiting for async commands, and scalar work on the PE_CPU.

/** The control calls of `tl` (installed on `TLContext` by context.ts). */
export interface ControlCalls {
  /**
   * Waits for a composite (`CompletionHandle`), an async receive (`RecvFuture`, resolving to its
   * handle), or, without an argument, every outstanding async command. Timing only: a composite's
   * results stay pending in phase 1.
   */
  wait(handle?: CompletionHandle | RecvFuture): Promise<TensorHandle | undefined>;

  /** Keeps the PE_CPU busy for `n` cycles (scalar work of the kernel). */
  cycles(n: number): Promise<void>;
}

export const controlCalls: ControlCalls & ThisType<TLContext> = {
  wait(handle) {
    return this._call("wait", async () => {
      const scope = this._scope;
      if (handle === undefined) {
        await scope.dispatch();
        await scope.issue({ kind: "wait" });
        this._outstanding.clear();
        return undefined;
      }
      if (handle.tl !== this) {
        throw this._error("TL_INVALID_CALL", `tl.wait: ${handle} belongs to another kernel instance.`);
      }
      if (!this._outstanding.has(handle)) {
        throw this._error("TL_INVALID_CALL", `tl.wait: ${handle} was already waited for.`);
      }
      this._outstanding.delete(handle);
      await scope.dispatch();
      await scope.issue({ kind: "wait", commands: [handle.commandIndex] });
      return handle instanceof RecvFuture ? handle._finish() : undefined;
    });
  },

  cycles(n) {
    return this._call("cycles", async () => {
      if (!(Number.isFinite(n) && n >= 0)) {
        throw this._error("TL_INVALID_CALL", `tl.cycles(${n}): needs a finite number >= 0.`);
      }
      await this._scope.issue({ kind: "cycles", cycles: n });
    });
  },
};
