// `tl.composite("math", ...)` of packages/tl/README.md: the op applied to the inputs viewed as rows
// of their last dimension; reductions and softmax along each row.

import { invalid } from "./dtype.js";
import { binary, cast, clamp, isBinaryOp, isUnaryOp, unary } from "./elementwise.js";
import { reduce, softmax } from "./reduce.js";
import { formatShape, type RefTensor, sameShape } from "./tensor.js";

/**
 * `tl.composite("math", a, b?, { mathOp: op, scalars })`: `inputs` are `[a]` or `[a, b]` of one
 * shape and dtype. Elementwise ops keep the shape (`add` etc. take `b` or `scalars[0]`, `clamp`
 * takes `scalars = [lo, hi]`, `cast` is the identity); `sum max min` reduce the last axis to 1
 * (the `[rows, 1]` written at `outPtr`, in the same element order); `softmax` runs along each
 * row. `fma` and `where` cannot run as a composite.
 */
export function compositeMath(
  op: string,
  inputs: readonly RefTensor[],
  scalars: readonly number[] = [],
): RefTensor {
  const a = inputs[0];
  if (a === undefined || inputs.length > 2) {
    throw invalid("compositeMath", `needs one or two inputs, got ${inputs.length}.`);
  }
  const b = inputs[1];
  if (b !== undefined && (!sameShape(a.shape, b.shape) || a.dtype !== b.dtype)) {
    throw invalid(
      "compositeMath",
      `inputs must match, got ${a.dtype} ${formatShape(a.shape)} and ${b.dtype} ${formatShape(b.shape)}.`,
    );
  }
  const unaryOnly = (call: () => RefTensor): RefTensor => {
    if (b !== undefined) throw invalid("compositeMath", `${op} takes one input.`);
    return call();
  };
  if (isUnaryOp(op)) return unaryOnly(() => unary(op, a));
  if (op === "cast") return unaryOnly(() => cast(a, a.dtype));
  if (op === "sum" || op === "max" || op === "min") return unaryOnly(() => reduce(op, a, -1));
  if (op === "softmax") return unaryOnly(() => softmax(a, -1));
  if (op === "clamp") {
    if (scalars.length !== 2) throw invalid("compositeMath", "clamp needs scalars [lo, hi].");
    return unaryOnly(() => clamp(a, scalars[0] as number, scalars[1] as number));
  }
  if (isBinaryOp(op)) {
    if (b !== undefined) return binary(op, a, b);
    const scalar = scalars[0];
    if (scalar === undefined) throw invalid("compositeMath", `${op} needs a second input or scalars[0].`);
    return binary(op, a, scalar);
  }
  throw invalid("compositeMath", `${JSON.stringify(op)} cannot run as a composite math op.`);
}
