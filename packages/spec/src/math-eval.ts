import { KbError } from "@kb/errors";
import type { Dtype } from "./dtype.js";
import { integerElement, integerLine, integerType, WRAPPING_OPS, wrapInteger } from "./integer-ops.js";
import { type ElementFn, type LineMathOp, MATH_OPS, type MathOpInfo, mathOutputShape } from "./math-ops.js";

// The f64 evaluation of one math op of the table over whole operands: phase 2 (@kb/data-executor's
// applyMath) and phase 1's known values (@kb/tl) both call it and round its result once to the
// output dtype, so the two phases compute the same bytes.

/** An operand of {@link evaluateMath}: its elements in row-major order, as f64, and its shape. */
export interface MathOperand {
  readonly values: Float64Array;
  readonly shape: readonly number[];
}

/** Where the scalars of an op go: `scalars[0]` replaces operand `scalarIndex` when the op has one fewer tensor operand. */
export interface MathScalars {
  readonly scalars: readonly number[];
  /** The operand the scalar stands for (default: the last). */
  readonly scalarIndex?: number | undefined;
  /**
   * The result dtype the caller rounds to. On an integer dtype (`i8`, `i32`, `u32`) the ops of
   * `WRAPPING_OPS` compute as integers and wrap (integer-ops.ts), unless a scalar operand is not
   * an integer (`mul(x, 0.5)`: f64, then the caller's rounding, as for a float op).
   */
  readonly dtype?: Dtype | undefined;
}

/**
 * The shape numpy broadcasting gives `shapes` (aligned at their last dimension, a dimension of 1
 * stretching to the other's size), or null when two sizes differ and neither is 1.
 */
export function broadcastShapes(shapes: readonly (readonly number[])[]): number[] | null {
  const rank = Math.max(0, ...shapes.map((shape) => shape.length));
  const out: number[] = new Array(rank).fill(1);
  for (const shape of shapes) {
    const offset = rank - shape.length;
    for (let i = 0; i < shape.length; i++) {
      const size = shape[i] as number;
      const current = out[offset + i] as number;
      if (size === current || size === 1) continue;
      if (current !== 1) return null;
      out[offset + i] = size;
    }
  }
  return out;
}

/**
 * The op `op` over `operands` in f64, as a new array of `shapeOut`'s elements (row-major):
 * elementwise ops broadcast their operands to `shapeOut`; reduce and row ops go along `axis`
 * (negative counts from the end; null: the last); a swap exchanges `axis` and `params[0]`.
 * Throws `OPLOG_INVALID` for an unknown op, the wrong number of operands or scalars, or shapes
 * that do not broadcast to `shapeOut`.
 */
export function evaluateMath(
  op: string,
  operands: readonly MathOperand[],
  shapeOut: readonly number[],
  axis: number | null,
  { scalars, scalarIndex, dtype }: MathScalars,
): Float64Array {
  const info = MATH_OPS[op];
  if (info === undefined) throw new KbError("OPLOG_INVALID", `unknown math op "${op}".`);
  const withScalar = info.scalar && operands.length === info.arity - 1;
  if (operands.length !== info.arity && !withScalar) {
    throw new KbError(
      "OPLOG_INVALID",
      `math op "${op}" needs ${info.arity} input(s), got ${operands.length}.`,
    );
  }
  const out = new Float64Array(shapeOut.reduce((p, s) => p * s, 1));
  const wrapType = WRAPPING_OPS.has(op) ? integerType(dtype) : undefined;
  if (info.shape === "elementwise") {
    const needed = (withScalar ? 1 : 0) + info.params.length;
    if (scalars.length < needed) {
      throw new KbError(
        "OPLOG_INVALID",
        withScalar
          ? `math op "${op}" has ${operands.length === 1 ? "one input" : `${operands.length} inputs`} and no scalar.`
          : `math op "${op}" needs scalars [${info.params.join(", ")}], got ${scalars.length}.`,
      );
    }
    const args: (Float64Array | number)[] = operands.map((operand) => broadcastTo(op, operand, shapeOut));
    if (withScalar) {
      const at = scalarIndex ?? info.arity - 1;
      if (!(Number.isInteger(at) && at >= 0 && at < info.arity)) {
        throw new KbError(
          "OPLOG_INVALID",
          `math op "${op}": scalar_index ${at} is not an operand of ${info.arity}.`,
        );
      }
      args.splice(at, 0, scalars[0] as number);
    }
    args.push(...scalars.slice(withScalar ? 1 : 0, needed));
    const integer = wrapType !== undefined && scalars.slice(0, needed).every(Number.isInteger);
    // A cast to an integer dtype truncates toward zero (Triton's fptosi / fptoui, C's conversion);
    // the caller's rounding then only saturates (NaN gives 0).
    const truncate = op === "cast" && integerType(dtype) !== undefined;
    const element = integer
      ? integerElement(op, wrapType, info.element)
      : truncate
        ? Math.trunc
        : info.element;
    elementwise(element, args, out);
    if (integer) for (let i = 0; i < out.length; i++) out[i] = wrapInteger(out[i] as number, wrapType);
    return out;
  }
  const input = operands[0] as MathOperand;
  const a = checkAxis(op, input.shape, axis);
  if (info.shape === "swap") {
    const other = checkAxis(op, input.shape, scalars[0] ?? a);
    swapAxes(input, a, other, out);
  } else {
    line(
      wrapType === undefined ? info : { ...info, line: integerLine(op, wrapType, info.line) },
      input,
      a,
      out,
    );
    if (wrapType !== undefined)
      for (let i = 0; i < out.length; i++) out[i] = wrapInteger(out[i] as number, wrapType);
  }
  return out;
}

/** `operand`'s values broadcast to `shape` (the values themselves when the shapes are equal). */
function broadcastTo(op: string, operand: MathOperand, shape: readonly number[]): Float64Array {
  const from = operand.shape;
  const size = shape.reduce((p, s) => p * s, 1);
  const same = from.length === shape.length && from.every((s, i) => s === shape[i]);
  if (same) {
    if (operand.values.length !== size) {
      throw new KbError(
        "OPLOG_INVALID",
        `math op "${op}": an input has ${operand.values.length} elements, the output ${size}.`,
      );
    }
    return operand.values;
  }
  const joint = broadcastShapes([from, shape]);
  if (joint === null || joint.length !== shape.length || joint.some((s, i) => s !== shape[i])) {
    throw new KbError(
      "OPLOG_INVALID",
      `math op "${op}": an input of shape [${from.join(", ")}] does not broadcast to the output's [${shape.join(", ")}].`,
    );
  }
  // The input's stride for each output dimension: 0 where it is stretched (or missing).
  const rank = shape.length;
  const strides = new Array<number>(rank).fill(0);
  let stride = 1;
  for (let i = from.length - 1; i >= 0; i--) {
    const o = rank - from.length + i;
    strides[o] = from[i] === 1 ? 0 : stride;
    stride *= from[i] as number;
  }
  const out = new Float64Array(size);
  const index = new Array<number>(rank).fill(0);
  let source = 0;
  for (let i = 0; i < size; i++) {
    out[i] = operand.values[source] as number;
    // Advance the output's multi-index (row-major) and the source offset with it.
    for (let d = rank - 1; d >= 0; d--) {
      source += strides[d] as number;
      if (++(index[d] as number) < (shape[d] as number)) break;
      source -= (strides[d] as number) * (shape[d] as number);
      index[d] = 0;
    }
  }
  return out;
}

/** `out[i] = element(a[i], b[i], c[i], i)`, where an argument is an operand's elements or a scalar. */
function elementwise(element: ElementFn, args: readonly (Float64Array | number)[], out: Float64Array): void {
  const [a = 0, b = 0, c = 0] = args;
  const at = (arg: Float64Array | number, i: number): number =>
    typeof arg === "number" ? arg : (arg[i] as number);
  for (let i = 0; i < out.length; i++) out[i] = element(at(a, i), at(b, i), at(c, i), i);
}

/** `axis` made non-negative (null: the last), or `OPLOG_INVALID` when out of range. */
function checkAxis(op: string, shape: readonly number[], axis: number | null): number {
  const rank = shape.length;
  const a = axis === null ? rank - 1 : axis < 0 ? axis + rank : axis;
  if (!(Number.isInteger(a) && a >= 0 && a < rank)) {
    throw new KbError(
      "OPLOG_INVALID",
      `math op "${op}": axis ${axis} is out of range for [${shape.join(", ")}].`,
    );
  }
  return a;
}

/** A reduce or row op along `axis`: each line x[o, :, i] through the op into out[o, :, i]. */
function line(info: LineMathOp, input: MathOperand, axis: number, out: Float64Array): void {
  const shape = input.shape;
  const length = shape[axis] as number;
  // The output's length along the axis: 1 for a reduction, `length` for a row op.
  const outLength = mathOutputShape(info as MathOpInfo, shape, axis)[axis] as number;
  const inner = shape.slice(axis + 1).reduce((p, s) => p * s, 1);
  const outer = shape.slice(0, axis).reduce((p, s) => p * s, 1);
  for (let o = 0; o < outer; o++) {
    for (let i = 0; i < inner; i++) {
      info.line(input.values, o * length * inner + i, out, o * outLength * inner + i, length, inner);
    }
  }
}

/** `input` with dimensions `a` and `b` exchanged, into `out` (row-major over the output shape). */
function swapAxes(input: MathOperand, a: number, b: number, out: Float64Array): void {
  const shape = input.shape;
  const rank = shape.length;
  const inStrides = new Array<number>(rank);
  let stride = 1;
  for (let d = rank - 1; d >= 0; d--) {
    inStrides[d] = stride;
    stride *= shape[d] as number;
  }
  // Output dimension d reads the input's dimension perm[d].
  const perm = shape.map((_, d) => (d === a ? b : d === b ? a : d));
  const outShape = perm.map((d) => shape[d] as number);
  const index = new Array<number>(rank).fill(0);
  for (let i = 0; i < out.length; i++) {
    let source = 0;
    for (let d = 0; d < rank; d++) source += (index[d] as number) * (inStrides[perm[d] as number] as number);
    out[i] = input.values[source] as number;
    for (let d = rank - 1; d >= 0; d--) {
      if (++(index[d] as number) < (outShape[d] as number)) break;
      index[d] = 0;
    }
  }
}
