import type { TLContext } from "./context.js";
import { TensorHandle } from "./handles.js";

// Triton's `tl.where(mask, x, 0.0)`: either value may be a number. It is taken in the other
// value's dtype (Triton casts a Python scalar to the tensor's type) as a `[1]` TCM constant, which
// broadcasts: the op log and phase 2 see the where of three tensors (and the constant's fill).

/**
 * `where`'s arguments `[cond, a, b, ...rest]` with a number `a` or `b` replaced by a `[1]`
 * constant of the other's dtype; unchanged when neither is a number. Throws `TL_INVALID_CALL` when
 * both are numbers (no tensor says the dtype).
 */
export function whereNumbers(tl: TLContext, args: readonly unknown[]): readonly unknown[] {
  const [cond, a, b, ...rest] = args;
  const aNumber = typeof a === "number";
  const bNumber = typeof b === "number";
  if (!aNumber && !bNumber) return args;
  if (aNumber && bNumber) {
    throw tl._error(
      "TL_INVALID_CALL",
      `tl.where: a and b are both numbers (${a}, ${b}); one must be a tensor, whose dtype the result takes (tl.full(shape, ${a}, dtype) for the other).`,
    );
  }
  const tensor = aNumber ? b : a;
  if (!(tensor instanceof TensorHandle)) return args; // the where's own checks name what it is
  const constant = (value: number) => tl.full([1], value, tensor.dtype, "where");
  return [cond, aNumber ? constant(a) : a, bNumber ? constant(b as number) : b, ...rest];
}
