import { broadcastShapes } from "@kb/spec";
import { formatShape, shapeSize } from "@kb/tensor";
import { compositeCommand } from "./composite.js";
import { runDot, runMath } from "./compute.js";
import type { TLContext } from "./context.js";
import { checkDeviceSide } from "./device-access.js";
import { CompletionHandle, TensorHandle } from "./handles.js";
import type { CompositeOptions, DotOptions, MathOptions } from "./options.js";
import { aliasOf, axisOf, swapKeepsBytes, swapped } from "./shapes.js";
import { checkOwned, checkShape, pointerAddress } from "./validate.js";

// The GEMM and composite calls of `tl`: `tl.dot` on PE_GEMM (its work in compute.ts) and the
// tiled pipelines of the PE scheduler (their commands in composite.ts), and the shape calls that
// may copy on PE_MATH (broadcastTo, swapAxes). The math ops are in math-calls.ts.

/** The GEMM and composite calls of `tl` (installed on `TLContext` by context.ts). */
export interface ComputeCalls {
  /**
   * `a @ b` on PE_GEMM; both in TCM, `(M, K) x (K, N)`. With `acc` (or `{ acc }`), adds into it
   * and consumes it: the result takes its bytes, so use the returned handle (`acc = await
   * tl.dot(a, b, acc)`); the old one is `TL_INVALID_CALL` from then on;
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

  /**
   * `x` broadcast to `shape` (numpy's rules). No command when no byte moves (the same shape, or
   * only dimensions of 1 added: a reshape); otherwise one PE_MATH `copy` of `shape`'s elements
   * (1 cycle per vector of `lanes` elements, like `add`). Elementwise ops broadcast their operands
   * themselves: this is for a tensor a later command reads whole (a store, a dot).
   */
  broadcastTo(x: TensorHandle, shape: readonly number[], options?: MathOptions): Promise<TensorHandle>;

  /**
   * `x` with dimensions `dim0` and `dim1` exchanged, bytes moved: one PE_MATH `transpose` of
   * `x`'s elements (1 cycle per vector), or no command when no byte moves (see `tl.trans`).
   */
  swapAxes(x: TensorHandle, dim0: number, dim1: number, options?: MathOptions): Promise<TensorHandle>;
}

export const computeCalls: ComputeCalls & ThisType<TLContext> = {
  dot(a, b, options = {}) {
    const opts: DotOptions = options instanceof TensorHandle ? { acc: options } : options;
    return this._call("dot", (site) => runDot(this._scope, site, a, b, opts));
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

  broadcastTo(x, shape, options = {}) {
    return this._call("broadcastTo", async () => {
      checkOwned(this, "broadcastTo", x);
      checkShape(this, "broadcastTo", shape);
      const joint = broadcastShapes([x.shape, shape]);
      if (joint === null || formatShape(joint) !== formatShape(shape)) {
        throw this._error(
          "TL_INVALID_CALL",
          `tl.broadcastTo: ${x.describe()} does not broadcast to ${formatShape(shape)} (numpy's rules: sizes aligned at the last dimension must be equal, or 1 in ${formatShape(x.shape)}).`,
        );
      }
      if (shapeSize(shape) === x.size && options.out === undefined)
        return aliasOf(this._scope, "broadcastTo", x, shape);
      return runMath(this._scope, "copy", [x], [], { broadcastTo: shape, out: options.out });
    });
  },

  swapAxes(x, dim0, dim1, options = {}) {
    return this._call("swapAxes", async () => {
      checkOwned(this, "swapAxes", x);
      const rank = x.shape.length;
      const a = axisOf(this, "swapAxes", dim0, rank);
      const b = axisOf(this, "swapAxes", dim1, rank);
      if (swapKeepsBytes(x.shape, a, b) && options.out === undefined)
        return aliasOf(this._scope, "swapAxes", x, swapped(x.shape, a, b));
      return runMath(this._scope, "transpose", [x], [b], { axis: a, out: options.out });
    });
  },
};
