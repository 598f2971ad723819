import { DTYPE_BYTES, type Dtype, formatShape, isFloatDtype, shapeSize, Tensor } from "@kb/tensor";
import type { TLContext } from "./context.js";
import type { TensorHandle } from "./handles.js";
import type { Pointer } from "./options.js";
import { aliasOf, axisOf, resolveShape, swapKeepsBytes, swapped } from "./shapes.js";
import { permutedView, transposedView } from "./trans.js";
import { checkAxis, checkDtype, checkOwned, checkShape, checkView, pointerAddress } from "./validate.js";
import { deriveKnown } from "./values.js";

// The index and metadata calls of `tl` (synchronous, no command): the kernel instance's place in
// the grid, handles on device memory, TCM constants and buffers, views, and the scratch marks.

/** The index and metadata calls of `tl` (installed on `TLContext` by context.ts). */
export interface MetadataCalls {
  /** Axis 0: the PE's index in its cube's part of the grid; 1: the cube's; 2: the SIP's. */
  programId(axis?: number): number;

  /** Axis 0: PEs per cube in the grid; 1: cubes per SIP; 2: SIPs. */
  numPrograms(axis?: number): number;

  /** Ceiling division (Triton's `tl.cdiv`); `b` must be nonzero and both finite. */
  cdiv(a: number, b: number): number;

  /** A handle on device memory without moving bytes (e.g. an operand a composite streams). */
  ref(ptr: Pointer, shape: readonly number[], dtype?: Dtype): TensorHandle;

  /** A TCM tensor of zeros (written to TCM the first time a command reads it). */
  zeros(shape: readonly number[], dtype?: Dtype): TensorHandle;

  /**
   * TCM scratch of `shape` without defined values, to write into (`{ out }` of loads and math
   * ops, `dstAddr` of a receive, through `tl.view`): a buffer that costs no fill. Its `data`
   * throws until something wrote it.
   */
  empty(shape: readonly number[], dtype?: Dtype): TensorHandle;

  /**
   * A TCM tensor filled with `value` rounded to `dtype` (written to TCM the first time a command
   * reads it); a BigInt `value` (Python's int past 2^53) is exact in an integer dtype (`i64`,
   * `u64`). `op` names the call in messages (`zeros` passes its own name).
   */
  full(shape: readonly number[], value: number | bigint, dtype?: Dtype, op?: string): TensorHandle;

  /** `[start, end)` as a 1-D TCM tensor (written to TCM the first time a command reads it). */
  arange(start: number, end: number, dtype?: Dtype): TensorHandle;

  /**
   * Elements `[start, start + size(shape))` of the contiguous TCM tensor `x`, as a tensor of
   * `shape`: the same bytes, no command (a tail tile, one piece of a buffer a kernel streams
   * through). Writing through the view (the `out` of a load or math op) changes `x` and vice versa;
   * a view of a constant (`tl.zeros`) writes the whole constant to TCM first. Buffers meant to be
   * written piece by piece are `tl.empty`.
   */
  view(x: TensorHandle, start: number, shape: readonly number[]): TensorHandle;

  /** `tl.full(shape, value, dtype)` under Triton's name (a constant, written to TCM when first read). */
  splat(value: number | bigint, shape: readonly number[], dtype?: Dtype): TensorHandle;

  /**
   * The same elements in another shape of the same size (one dimension may be -1: inferred); no
   * command. `x` must be contiguous: a plain TCM tensor (a tile loaded with `{ stride }` is one:
   * its TCM copy is contiguous), not a transposed view, or a ref.
   */
  reshape(x: TensorHandle, shape: readonly number[]): TensorHandle;

  /** `x` with a dimension of 1 inserted at `axis` (in [-rank - 1, rank]); a reshape, no command. */
  expandDims(x: TensorHandle, axis: number): TensorHandle;

  /**
   * Triton's `tl.trans(x, *dims)` without moving bytes. With a full order of `x`'s dims (one per
   * dimension, `trans(x, 1, 0)`, `trans(x, 0, 2, 1)`) it is that permutation: output dimension
   * `k` is input dimension `dims[k]` (`trans(x, 0, 1)` of a 2-D `x` is `x`). Without dims, a 2-D
   * `x` transposed (Triton's default `(1, 0)`; on 3 or more dims Triton raises, and so does this:
   * pass the permutation). On 3 or more dims, two dims `dim0, dim1`
   * swap those two. The last two exchanged give a transposed view (a GEMM reads it transposed;
   * other commands refuse it); other orders only when no byte moves (size-1 dimensions moving: a
   * reshape). Any other order throws `TL_INVALID_CALL`: use `await tl.permute(x, dims)` or
   * `await tl.swapAxes(x, dim0, dim1)`, PE_MATH copies.
   */
  trans(x: TensorHandle, ...dims: number[]): TensorHandle;

  /** A mark of the scratch allocator: `scratchRelease(mark)` frees everything allocated after it. */
  scratchMark(): number;

  /**
   * Frees the scratch allocated after `mark` (from `scratchMark`), so a loop over tiles can reuse
   * TCM. Handles allocated after the mark become unusable: passing one to a later call is an error.
   */
  scratchRelease(mark: number): void;

  /** Bytes of scratch in use and available. */
  readonly scratchUsage: { readonly used: number; readonly bytes: number };
}

export const metadataCalls: MetadataCalls & ThisType<TLContext> = {
  programId(axis = 0) {
    return this.placement.programId[checkAxis(this, axis, "programId")];
  },

  numPrograms(axis = 0) {
    return this.placement.numPrograms[checkAxis(this, axis, "numPrograms")];
  },

  cdiv(a, b) {
    if (!Number.isFinite(a) || !Number.isFinite(b) || b === 0) {
      throw this._error("TL_INVALID_CALL", `tl.cdiv(${a}, ${b}): needs finite numbers and b != 0.`);
    }
    return Math.ceil(a / b);
  },

  ref(ptr, shape, dtype = "f16") {
    checkShape(this, "ref", shape);
    checkDtype(this, "ref", dtype);
    return this._scope.handle({
      op: "ref",
      origin: "ref",
      shape,
      dtype,
      space: "hbm",
      address: pointerAddress(this, ptr, "ref"),
    });
  },

  zeros(shape, dtype = "f16") {
    return this.full(shape, 0, dtype, "zeros");
  },

  empty(shape, dtype = "f16") {
    checkShape(this, "empty", shape);
    checkDtype(this, "empty", dtype);
    const handle = this._scope.scratchHandle("empty", "compute", shape, dtype);
    this.memory?.markPending?.(handle.address, handle.nbytes);
    return handle;
  },

  full(shape, value, dtype = "f16", op = "full") {
    checkShape(this, op, shape);
    checkDtype(this, op, dtype);
    if (typeof value === "bigint" && !fitsBigInt(value, dtype))
      throw this._error(
        "TL_INVALID_CALL",
        `tl.${op}(${formatShape(shape)}, ${value}n, "${dtype}"): ${dtype} cannot hold ${value}; a BigInt fills an integer dtype wide enough for it (i64 or u64 past 2^32), a number any dtype.`,
      );
    const handle = this._scope.scratchHandle(op, "constant", shape, dtype);
    handle._data = Tensor.full(shape, value, dtype);
    return handle;
  },

  arange(start, end, dtype = "i32") {
    if (!Number.isInteger(start) || !Number.isInteger(end) || end <= start) {
      throw this._error("TL_INVALID_CALL", `tl.arange(${start}, ${end}): needs integers with end > start.`);
    }
    const handle = this._scope.scratchHandle("arange", "constant", [end - start], dtype);
    handle._data = Tensor.fromArray(
      Array.from({ length: end - start }, (_, i) => start + i),
      [end - start],
      dtype,
    );
    return handle;
  },

  view(x, start, shape) {
    checkView(this, x, start, shape);
    const bytes = DTYPE_BYTES[x.dtype];
    const handle = this._scope.handle({
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
    deriveKnown(x, handle);
    return handle;
  },

  splat(value, shape, dtype = "f16") {
    return this.full(shape, value, dtype, "splat");
  },

  reshape(x, shape) {
    checkOwned(this, "reshape", x);
    return aliasOf(this._scope, "reshape", x, resolveShape(this, "reshape", x, shape));
  },

  expandDims(x, axis) {
    checkOwned(this, "expandDims", x);
    const at = axisOf(this, "expandDims", axis, x.shape.length + 1);
    return aliasOf(this._scope, "expandDims", x, [...x.shape.slice(0, at), 1, ...x.shape.slice(at)]);
  },

  trans(x, ...dims) {
    checkOwned(this, "trans", x);
    const rank = x.shape.length;
    if (rank < 2) {
      throw this._error("TL_INVALID_CALL", `tl.trans(${x.describe()}): needs at least 2 dimensions.`);
    }
    if (dims.length === rank) return permutedView(this, x, dims);
    if (dims.length === 0 && rank !== 2) {
      // Triton's tl.trans without dims transposes a 2-D tensor only (its default order is (1, 0)).
      const order = [...Array(rank).keys()].reverse();
      throw this._error(
        "TL_INVALID_CALL",
        `tl.trans(${x.describe()}): without dims tl.trans transposes a 2-D tensor only (Triton's rule); pass the permutation of the ${rank} dims, e.g. tl.trans(x, ${order.join(", ")}), or the two dims to swap (tl.trans(x, ${rank - 2}, ${rank - 1})).`,
      );
    }
    if (dims.length !== 0 && dims.length !== 2) {
      throw this._error(
        "TL_INVALID_CALL",
        `tl.trans(${x.describe()}, ${dims.join(", ")}): give a full order of the ${rank} dims (Triton's), two dims to swap, or none (the last two).`,
      );
    }
    const [dim0 = -2, dim1 = -1] = dims;
    const a = axisOf(this, "trans", dim0, rank);
    const b = axisOf(this, "trans", dim1, rank);
    const lastTwo = Math.min(a, b) === rank - 2 && Math.max(a, b) === rank - 1;
    if (!lastTwo) {
      if (swapKeepsBytes(x.shape, a, b)) return aliasOf(this._scope, "trans", x, swapped(x.shape, a, b));
      throw this._error(
        "TL_INVALID_CALL",
        `tl.trans(${x.describe()}, ${dim0}, ${dim1}): swapping dimensions ${a} and ${b} of ${formatShape(x.shape)} moves bytes, and tl.trans never does; use await tl.swapAxes(x, ${dim0}, ${dim1}) (a PE_MATH copy).`,
      );
    }
    return transposedView(this, x);
  },

  scratchMark() {
    return this._scope.scratch.cursor;
  },

  scratchRelease(mark) {
    this._scope.scratch.release(this, mark, () => this._currentCallFound());
  },

  get scratchUsage() {
    return { used: this._scope.scratch.cursor, bytes: this._scope.scratch.bytes };
  },
};

/** True when the integer dtype `dtype` holds `value` exactly. */
function fitsBigInt(value: bigint, dtype: Dtype): boolean {
  if (isFloatDtype(dtype)) return false;
  try {
    Tensor.full([], value, dtype);
    return true;
  } catch {
    return false;
  }
}
