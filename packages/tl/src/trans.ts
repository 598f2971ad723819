import { formatShape } from "@kb/tensor";
import type { TLContext } from "./context.js";
import type { TensorHandle } from "./handles.js";
import { aliasOf, permutation } from "./shapes.js";
import { deriveKnown, swapLast, transpose } from "./values.js";

// The views `tl.trans` makes (metadata-calls.ts): the last two dimensions exchanged (a
// transposed view a GEMM reads transposed), and Triton's `tl.trans(x, *dims)` with a full order
// of dims when no byte moves.

/** `x` with its last two dimensions exchanged, as a transposed view of the same bytes. */
export function transposedView(tl: TLContext, x: TensorHandle): TensorHandle {
  const handle = tl._scope.handle({
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
  deriveKnown(x, handle);
  return handle;
}

/**
 * Triton's `tl.trans(x, *dims)` with one entry per dimension: output dimension `k` is `x`'s
 * `dims[k]`. The identity is `x`; the last two exchanged a transposed view; an order that moves
 * only size-1 dimensions a reshape; any other order `TL_INVALID_CALL` naming `tl.permute`.
 */
export function permutedView(tl: TLContext, x: TensorHandle, dims: readonly number[]): TensorHandle {
  const order = permutation(tl, "trans", x, dims);
  const rank = order.length;
  if (order.every((d, k) => d === k)) return x;
  const lastTwo = order.every((d, k) =>
    k < rank - 2 ? d === k : d === (k === rank - 2 ? rank - 1 : rank - 2),
  );
  if (lastTwo) return transposedView(tl, x);
  // No byte moves when the dimensions larger than 1 keep their order.
  const moving = order.filter((d) => (x.shape[d] as number) > 1);
  if (moving.every((d, i) => i === 0 || d > (moving[i - 1] as number))) {
    return aliasOf(
      tl._scope,
      "trans",
      x,
      order.map((d) => x.shape[d] as number),
    );
  }
  throw tl._error(
    "TL_INVALID_CALL",
    `tl.trans(${x.describe()}, ${dims.join(", ")}): that order of ${formatShape(x.shape)} moves bytes, and tl.trans never does; use await tl.permute(x, [${dims.join(", ")}]) (PE_MATH copies).`,
  );
}
