import { KbError } from "@kb/errors";

/** A shape as text: `[2, 3]`, `[]` for a scalar. */
export function formatShape(shape: readonly number[]): string {
  return `[${shape.join(", ")}]`;
}

/**
 * The number of elements of a tensor of `shape`: the product of its dimensions (1 for `[]`,
 * 0 when a dimension is 0).
 *
 * Throws `TENSOR_INVALID` when `shape` is not an array of non-negative integers or the product is
 * not a safe integer.
 */
export function shapeSize(shape: readonly number[]): number {
  const problem = shapeProblem(shape);
  if (problem !== undefined) throw new KbError("TENSOR_INVALID", `shape ${describeShape(shape)} ${problem}`);
  let size = 1;
  for (const dim of shape) size *= dim;
  return size;
}

/**
 * What is wrong with `shape` (a sentence ending with a period), or undefined when it is an array
 * of non-negative safe integers whose product is a safe integer.
 */
export function shapeProblem(shape: unknown): string | undefined {
  if (!Array.isArray(shape)) return "is not an array of dimensions.";
  let size = 1;
  for (let axis = 0; axis < shape.length; axis++) {
    const dim: unknown = shape[axis];
    if (typeof dim !== "number" || !Number.isSafeInteger(dim) || dim < 0) {
      return `is invalid: dimension ${axis} must be a non-negative integer, got ${String(dim)}.`;
    }
    size *= dim;
  }
  if (!Number.isSafeInteger(size)) return `is too large: ${size} elements.`;
  return undefined;
}

/** The shape as text for an error message, whatever it is. */
export function describeShape(shape: unknown): string {
  return Array.isArray(shape) ? formatShape(shape) : String(shape);
}

/** Row-major strides in elements: the last dimension has stride 1. */
export function rowMajorStrides(shape: readonly number[]): number[] {
  const strides = new Array<number>(shape.length);
  let stride = 1;
  for (let axis = shape.length - 1; axis >= 0; axis--) {
    strides[axis] = stride;
    stride *= shape[axis]!;
  }
  return strides;
}
