import { computeMath } from "@kb/tensor";

/**
 * One math op of the tl surface on host tensors: computed in double precision by the op table's
 * evaluation (`evaluateMath` over `MATH_OPS` of @kb/oplog), rounded once to `dtype`. Elementwise
 * ops broadcast their inputs to `shapeOut` (numpy's rules); `scalars[0]` stands for the operand
 * at `scalarIndex` (default the last) of an op given one input fewer. Reductions (`sum`, `max`,
 * `min`, `argmax`, `argmin`) reduce `axis` to 1; `softmax` is max, subtract, exp, sum and divide
 * along `axis`, `cumsum` its prefix sums; `fill` / `iota` take no input. Throws `OPLOG_INVALID`
 * for an unknown op or operands that do not fit it. An op that reads or makes a 64-bit integer (or
 * has a BigInt scalar) computes exactly (`computeMath` of @kb/tensor): `i64` / `u64` values past
 * 2^53 are not rounded. It is that function, under the executor's name.
 */
export const applyMath: typeof computeMath = computeMath;
