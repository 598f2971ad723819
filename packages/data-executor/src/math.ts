import { evaluateMath } from "@kb/oplog";
import { type Dtype, Tensor } from "@kb/tensor";

/**
 * One math op of the tl surface on host tensors: computed in double precision by the op table's
 * evaluation (`evaluateMath` over `MATH_OPS` of @kb/oplog), rounded once to `dtype`. Elementwise
 * ops broadcast their inputs to `shapeOut` (numpy's rules); `scalars[0]` stands for the operand
 * at `scalarIndex` (default the last) of an op given one input fewer. Reductions (`sum`, `max`,
 * `min`, `argmax`, `argmin`) reduce `axis` to 1; `softmax` is max, subtract, exp, sum and divide
 * along `axis`, `cumsum` its prefix sums; `fill` / `iota` take no input. Throws `OPLOG_INVALID`
 * for an unknown op or operands that do not fit it.
 */
export function applyMath(
  op: string,
  inputs: readonly Tensor[],
  shapeOut: readonly number[],
  dtype: Dtype,
  axis: number | null,
  scalars: readonly number[],
  scalarIndex?: number,
): Tensor {
  const operands = inputs.map((input) => ({ values: input.toFloat64Array(), shape: input.shape }));
  const values = evaluateMath(op, operands, shapeOut, axis, { scalars, scalarIndex, dtype });
  return Tensor.fromArray(values, shapeOut, dtype);
}
