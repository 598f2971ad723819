import { KbError } from "@kb/errors";
import { type ElementFn, type LineMathOp, MATH_OPS, mathOutputShape } from "@kb/oplog";
import { type Dtype, formatShape, shapeSize, Tensor } from "@kb/tensor";

/**
 * One math op of the tl surface on host tensors: computed in double precision by the op table's
 * evaluation (`MATH_OPS` of @kb/oplog), rounded once to `dtype`. Reductions (`sum`, `max`, `min`)
 * reduce `axis` to 1; `softmax` is max, subtract, exp, sum and divide along `axis`; `fill` /
 * `iota` take no input. Throws `OPLOG_INVALID` for an unknown op or operands that do not fit it.
 */
export function applyMath(
  op: string,
  inputs: readonly Tensor[],
  shapeOut: readonly number[],
  dtype: Dtype,
  axis: number | null,
  scalars: readonly number[],
): Tensor {
  const info = MATH_OPS[op];
  if (info === undefined) throw new KbError("OPLOG_INVALID", `unknown math op "${op}".`);
  const size = shapeSize(shapeOut);
  const values = new Float64Array(size);
  const x = inputs.map((input) => input.toFloat64Array());
  const withScalar = info.scalar && x.length === info.arity - 1;
  if (x.length !== info.arity && !withScalar) {
    throw new KbError("OPLOG_INVALID", `math op "${op}" needs ${info.arity} input(s), got ${x.length}.`);
  }
  if (info.shape === "elementwise") {
    // The element function's arguments: the inputs, then the scalars it takes.
    const needed = (withScalar ? 1 : 0) + info.params.length;
    if (scalars.length < needed) {
      throw new KbError(
        "OPLOG_INVALID",
        withScalar
          ? `math op "${op}" has ${x.length === 1 ? "one input" : `${x.length} inputs`} and no scalar.`
          : `math op "${op}" needs scalars [${info.params.join(", ")}], got ${scalars.length}.`,
      );
    }
    for (const input of x) sameSize(op, input, size);
    elementwise(info.element, [...x, ...scalars.slice(0, needed)], values);
  } else {
    line(op, info, inputs[0] as Tensor, x[0] as Float64Array, values, axis);
  }
  return Tensor.fromArray(values, shapeOut, dtype);
}

function sameSize(op: string, values: Float64Array, size: number): void {
  if (values.length !== size) {
    throw new KbError(
      "OPLOG_INVALID",
      `math op "${op}": an input has ${values.length} elements, the output ${size}.`,
    );
  }
}

/** `out[i] = element(a[i], b[i], c[i], i)`, where an argument is an input's elements or a scalar. */
function elementwise(element: ElementFn, args: readonly (Float64Array | number)[], out: Float64Array): void {
  const [a = 0, b = 0, c = 0] = args;
  const at = (arg: Float64Array | number, i: number): number =>
    typeof arg === "number" ? arg : (arg[i] as number);
  for (let i = 0; i < out.length; i++) out[i] = element(at(a, i), at(b, i), at(c, i), i);
}

/** A reduce or row op along `axis`: each line x[o, :, i] through the op into out[o, :, i]. */
function line(
  op: string,
  info: LineMathOp,
  input: Tensor,
  x: Float64Array,
  out: Float64Array,
  axis: number | null,
): void {
  const shape = input.shape;
  const rank = shape.length;
  const a = axis === null ? rank - 1 : axis < 0 ? axis + rank : axis;
  if (!(a >= 0 && a < rank)) {
    throw new KbError(
      "OPLOG_INVALID",
      `math op "${op}": axis ${axis} is out of range for ${formatShape(shape)}.`,
    );
  }
  const length = shape[a] as number;
  // The output's length along the axis: 1 for a reduction, `length` for a row op.
  const outLength = mathOutputShape(info, shape, a)[a] as number;
  const inner = shape.slice(a + 1).reduce((p, s) => p * s, 1);
  const outer = shape.slice(0, a).reduce((p, s) => p * s, 1);
  for (let o = 0; o < outer; o++) {
    for (let i = 0; i < inner; i++) {
      info.line(x, o * length * inner + i, out, o * outLength * inner + i, length, inner);
    }
  }
}
