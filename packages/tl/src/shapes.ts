import { DTYPE_BYTES, formatShape, shapeSize, Tensor } from "@kb/tensor";
import type { CallScope } from "./call-scope.js";
import type { TensorHandle } from "./handles.js";
import { checkOwned, type ErrorSource } from "./validate.js";
import { deriveKnown } from "./values.js";

// Shapes of the metadata calls (reshape, expandDims, trans of two axes) and of the shape calls
// that may move bytes (broadcastTo, swapAxes): one handle on the same bytes with another shape,
// and when a swap of two axes can be one.

/** `axis` of a rank-`rank` tensor made non-negative (`TL_INVALID_CALL` when out of range). */
export function axisOf(tl: ErrorSource, call: string, axis: number, rank: number): number {
  if (!Number.isInteger(axis) || axis < -rank || axis >= rank) {
    throw tl._error("TL_INVALID_CALL", `tl.${call}: axis ${axis} is out of range for ${rank} dimensions.`);
  }
  return axis < 0 ? axis + rank : axis;
}

/** Checks `dims` is a permutation of `0 .. rank - 1` (negative dims count from the end). */
export function permutation(
  tl: ErrorSource,
  call: string,
  x: TensorHandle,
  dims: readonly number[],
): number[] {
  const rank = x.shape.length;
  const list = Array.isArray(dims) ? dims.map((d) => axisOf(tl, call, d, rank)) : [];
  if (list.length !== rank || new Set(list).size !== rank) {
    throw tl._error(
      "TL_INVALID_CALL",
      `tl.${call}(${x.describe()}, ${JSON.stringify(dims)}): dims must list each of the ${rank} dimensions once (a permutation of ${JSON.stringify([...Array(rank).keys()])}).`,
    );
  }
  return list;
}

/** `shape` with dimensions `a` and `b` exchanged. */
export function swapped(shape: readonly number[], a: number, b: number): number[] {
  return shape.map((size, i) => (i === a ? (shape[b] as number) : i === b ? (shape[a] as number) : size));
}

/**
 * True when exchanging dimensions `a` and `b` of `shape` moves no byte: the dimensions larger than
 * 1 keep their order (swapping with a size-1 dimension across other size-1 dimensions).
 */
export function swapKeepsBytes(shape: readonly number[], a: number, b: number): boolean {
  const lo = Math.min(a, b);
  const hi = Math.max(a, b);
  let moved = 0;
  for (let d = lo; d <= hi; d++) if ((shape[d] as number) > 1) moved++;
  return moved <= 1;
}

/**
 * `shape` with at most one -1 resolved so that it holds `size` elements (`TL_INVALID_CALL`
 * otherwise, naming both shapes).
 */
export function resolveShape(
  tl: ErrorSource,
  call: string,
  x: TensorHandle,
  shape: readonly number[],
): number[] {
  const holes = shape.filter((size) => size === -1).length;
  const known = shape.filter((size) => size !== -1);
  const valid =
    Array.isArray(shape) && holes <= 1 && known.every((size) => Number.isInteger(size) && size >= 1);
  const rest = valid ? x.size / shapeSize(known) : Number.NaN;
  const resolved = shape.map((size) => (size === -1 ? rest : size));
  if (!valid || !Number.isInteger(rest) || shapeSize(resolved) !== x.size) {
    throw tl._error(
      "TL_INVALID_CALL",
      `tl.${call}: ${x.describe()} has ${x.size} elements; shape ${JSON.stringify(shape)} does not hold them (positive integers and at most one -1, same element count).`,
    );
  }
  return resolved;
}

/**
 * A handle on `x`'s bytes with another `shape` of the same element count (no command): `x` must
 * be a contiguous TCM tensor (not transposed, not a strided view) or a ref. A tile loaded with
 * `{ stride }` is contiguous in TCM (the DMA gathered its rows), so it qualifies; its strided
 * source goes with it, so a composite still refuses to stream it. A constant stays a constant
 * (written to TCM as a whole when any alias of it is first read).
 */
export function aliasOf(
  scope: CallScope,
  call: string,
  x: TensorHandle,
  shape: readonly number[],
): TensorHandle {
  const tl = scope.tl;
  checkOwned(tl, call, x);
  if (x.transposed || x.rowStride !== x.shape[x.shape.length - 1]) {
    throw tl._error(
      "TL_INVALID_CALL",
      `tl.${call}: ${x.describe()} from tl.${x.op} is not contiguous (a transposed or strided view): its elements are not in ${formatShape(shape)}'s order. Copy it first (tl.swapAxes, or a load in the layout you need).`,
    );
  }
  const handle = scope.handle({
    op: call,
    origin: x.origin,
    shape,
    dtype: x.dtype,
    space: x.space,
    address: x.address,
    source: x.source,
    sourceStride: x.sourceStride,
    scratchOffset: x.scratchOffset,
  });
  if (x._data !== null)
    handle._data = new Tensor(shape, x.dtype, x._data.bytes.slice(0, x.size * DTYPE_BYTES[x.dtype]));
  if (x.space === "tcm") handle._root = x._root ?? x;
  deriveKnown(x, handle);
  return handle;
}
