import { KbError } from "@kb/errors";
import {
  type Dtype,
  type ExactValues,
  evaluateExactMath,
  evaluateMath,
  isFloatDtype,
  type MathScalar,
  needsExactMath,
} from "@kb/spec";
import type { IntegerDtype } from "./convert.js";
import { elementView, encodeBigInt, type RawElements } from "./elements.js";
import { formatShape } from "./shape.js";
import { Tensor } from "./tensor.js";

// Exact integers in and out of tensors: 64-bit values past 2^53 as BigInts (a JS number holds
// them only to the nearest double), and one math op on host tensors that keeps them exact.

/**
 * Every element of an integer (or `i1`) tensor as a BigInt, exact for `i64` / `u64` too, in
 * row-major order. Throws `TENSOR_INVALID` for a float tensor.
 */
export function toBigInts(tensor: Tensor): bigint[] {
  if (isFloatDtype(tensor.dtype)) {
    throw new KbError(
      "TENSOR_INVALID",
      `${tensor}: toBigInts reads integer tensors; this one holds floats (use toFloat64Array).`,
    );
  }
  return Array.from(elementView(tensor) as ArrayLike<number | bigint>, (v) => BigInt(v));
}

/**
 * An integer tensor of `shape` holding `values` (BigInts, or numbers that are integers) in
 * row-major order, stored exactly. Throws `TENSOR_INVALID` for a float dtype, a count that is
 * not the shape's, or a value outside the dtype's range (`i1`: 0 or 1).
 */
export function tensorFromBigInts(
  values: ArrayLike<bigint | number>,
  shape: readonly number[],
  dtype: Dtype,
): Tensor {
  const tensor = new Tensor(shape, dtype);
  const where = `tensorFromBigInts(${dtype} ${formatShape(shape)})`;
  if (isFloatDtype(dtype)) throw new KbError("TENSOR_INVALID", `${where}: ${dtype} is not an integer dtype.`);
  if (values.length !== tensor.size) {
    throw new KbError(
      "TENSOR_INVALID",
      `${where}: the shape holds ${tensor.size} elements, got ${values.length} values.`,
    );
  }
  const elements = elementView(tensor) as unknown as RawElements;
  for (let i = 0; i < tensor.size; i++) {
    const value = values[i] as bigint | number;
    if (typeof value === "number" && !Number.isInteger(value)) {
      throw new KbError("TENSOR_INVALID", `${where}: value ${i} is ${value}, not an integer.`);
    }
    const stored = encodeBigInt(BigInt(value), dtype as IntegerDtype);
    if (stored === undefined) {
      throw new KbError("TENSOR_INVALID", `${where}: value ${i}, ${value}, is outside ${dtype}'s range.`);
    }
    elements[i] = stored;
  }
  return tensor;
}

/**
 * The math op `op` of the op table on host tensors, rounded once to `dtype`: in f64
 * (`evaluateMath`) unless an operand or the result is a 64-bit integer or a scalar is a BigInt,
 * then exactly (`evaluateExactMath`: integers as BigInts, wrapped to the result's type). Phase 2
 * (the data executor) and phase 1's known values both call it, so the two phases agree byte for
 * byte. Throws `OPLOG_INVALID` for an op or operands that do not fit.
 */
export function computeMath(
  op: string,
  inputs: readonly Tensor[],
  shapeOut: readonly number[],
  dtype: Dtype,
  axis: number | null,
  scalars: readonly MathScalar[],
  scalarIndex?: number,
): Tensor {
  if (!needsExactMath([dtype, ...inputs.map((input) => input.dtype)], scalars)) {
    const operands = inputs.map((input) => ({ values: input.toFloat64Array(), shape: input.shape }));
    const values = evaluateMath(op, operands, shapeOut, axis, {
      scalars: scalars as number[],
      scalarIndex,
      dtype,
    });
    return Tensor.fromArray(values, shapeOut, dtype);
  }
  const operands = inputs.map((input) => ({ values: exactValuesOf(input), shape: input.shape }));
  return tensorFromExact(
    evaluateExactMath(op, operands, shapeOut, axis, {
      scalars,
      scalarIndex,
      dtype,
      operandDtype: inputs[0]?.dtype,
    }),
    shapeOut,
    dtype,
  );
}

/** A tensor's elements for the exact evaluation: BigInts for the integer dtypes, f64 for floats and `i1`. */
function exactValuesOf(tensor: Tensor): ExactValues {
  return isFloatDtype(tensor.dtype) || tensor.dtype === "i1" ? tensor.toFloat64Array() : toBigInts(tensor);
}

/** The exact evaluation's result as a tensor: BigInts stored as they are, f64 rounded once. */
function tensorFromExact(values: ExactValues, shape: readonly number[], dtype: Dtype): Tensor {
  return Array.isArray(values)
    ? tensorFromBigInts(values as readonly bigint[], shape, dtype)
    : Tensor.fromArray(values as Float64Array, shape, dtype);
}
