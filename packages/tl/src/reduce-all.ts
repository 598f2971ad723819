import { formatShape } from "@kb/tensor";
import type { CallScope } from "./call-scope.js";
import { runMath } from "./compute.js";
import type { TensorHandle } from "./handles.js";
import { aliasOf } from "./shapes.js";

// Triton's reductions with `axis=None` (the default): `tl.sum(x)`, `tl.max(x)`, ... reduce every
// axis of `x`. One PE_MATH op over the flattened tile (a reshape, no byte moves), its result
// reshaped to `x`'s rank with every dimension 1 (the reduced axes kept, so it broadcasts against
// `x` as Triton's scalar does). `argmax` / `argmin` give the flat (row-major) index.

/** `tl.${op}(x)` with the axis omitted: every axis of `x` reduced, shape `[1, ..., 1]`. */
export async function reduceAll(
  scope: CallScope,
  op: string,
  x: TensorHandle,
  out: TensorHandle | undefined,
): Promise<TensorHandle> {
  const rank = x.shape.length;
  if (rank === 1) return runMath(scope, op, [x], [], { axis: 0, out });
  const tl = scope.tl;
  const ones = x.shape.map(() => 1);
  // A tile loaded with { stride } is contiguous in TCM (the DMA gathered its rows): reduced as one.
  if (x.transposed || x.rowStride !== x.shape[rank - 1]) {
    throw tl._error(
      "TL_INVALID_CALL",
      `tl.${op} without an axis reduces every axis of ${x.describe()} from tl.${x.op}, which is not contiguous (a transposed or strided view); pass the axis (tl.${op}(x, ${rank - 1})), or copy it first (tl.swapAxes).`,
    );
  }
  if (out !== undefined && formatShape(out.shape) !== formatShape(ones)) {
    throw tl._error(
      "TL_INVALID_CALL",
      `tl.${op} without an axis gives shape ${formatShape(ones)} (every axis of ${formatShape(x.shape)} reduced); out is ${out.describe()}.`,
    );
  }
  const flat = aliasOf(scope, op, x, [x.size]);
  const result = await runMath(scope, op, [flat], [], {
    axis: 0,
    out: out === undefined ? undefined : aliasOf(scope, op, out, [1]),
  });
  return aliasOf(scope, op, result, ones);
}
