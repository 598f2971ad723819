import { compositeCommand } from "./composite.js";
import { runDot } from "./compute.js";
import type { TLContext } from "./context.js";
import { checkDeviceSide } from "./device-access.js";
import { CompletionHandle, TensorHandle } from "./handles.js";
import type { CompositeOptions, DotOptions } from "./options.js";
import { checkOwned, pointerAddress } from "./validate.js";

// The GEMM and composite calls of `tl`: `tl.dot` on PE_GEMM (its work in compute.ts) and the
// tiled pipelines of the PE scheduler (their commands in composite.ts). The math ops are in
// math-calls.ts.

/** The GEMM and composite calls of `tl` (installed on `TLContext` by context.ts). */
export interface ComputeCalls {
  /**
   * `a @ b` on PE_GEMM; both in TCM, `(M, K) x (K, N)`. With `acc` (or `{ acc }`), adds into it;
   * `{ outDtype }` sets the result dtype (default: the accumulator's, else f32 for float inputs
   * and i32 for i8).
   */
  dot(a: TensorHandle, b: TensorHandle, options?: DotOptions | TensorHandle): Promise<TensorHandle>;

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
  ): Promise<CompletionHandle>;
}

export const computeCalls: ComputeCalls & ThisType<TLContext> = {
  dot(a, b, options = {}) {
    const opts: DotOptions = options instanceof TensorHandle ? { acc: options } : options;
    return this._call("dot", () => runDot(this._scope, a, b, opts));
  },

  composite(op, a, b, options) {
    return this._call("composite", async () => {
      checkOwned(this, "composite", a);
      if (b !== null && b !== undefined) checkOwned(this, "composite", b);
      const out = pointerAddress(this, options.outPtr, "composite outPtr");
      checkDeviceSide(this, "composite outPtr", out);
      const { command, outBytes } = compositeCommand(this, op, a, b, out, options);
      await this._scope.dispatch();
      const issued = this._scope.sink.issue(command);
      // The composite computes: what it writes is pending in phase 1.
      this.memory?.markPending?.(out, outBytes);
      const handle = new CompletionHandle(this._completionId(), op, issued.index, this);
      this._outstanding.add(handle);
      await issued.done;
      return handle;
    });
  },
};
