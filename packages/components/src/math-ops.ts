/** How a math op behaves: operand count, whether it reduces the last axis, default cycles per element-vector. */
export interface MathOpInfo {
  /** Tensor operands (scalars not counted). */
  readonly arity: number;
  /** `reduce`: output drops the last axis to 1; `row`: reads whole rows (softmax) but keeps the shape. */
  readonly shape: "elementwise" | "reduce" | "row";
  /** Default PE_MATH cycles per vector of `lanes` elements (`pe_math_v1` param `op_cycles` overrides). */
  readonly cycles: number;
}

/**
 * The math ops of the tl surface (ADR-0046) that PE_MATH executes, with their default costs.
 * softmax is one op (max, subtract, exp, sum, divide over a row); `fill` writes `scalars[0]` to
 * every element and `iota` `scalars[0] + i` to element i (`tl.zeros` / `tl.full` / `tl.arange`
 * materialised in TCM); `cast` converts `inputDtype` to
 * `dtype`.
 */
export const MATH_OPS: Readonly<Record<string, MathOpInfo>> = Object.freeze({
  add: { arity: 2, shape: "elementwise", cycles: 1 },
  sub: { arity: 2, shape: "elementwise", cycles: 1 },
  mul: { arity: 2, shape: "elementwise", cycles: 1 },
  div: { arity: 2, shape: "elementwise", cycles: 4 },
  maximum: { arity: 2, shape: "elementwise", cycles: 1 },
  minimum: { arity: 2, shape: "elementwise", cycles: 1 },
  fma: { arity: 3, shape: "elementwise", cycles: 1 },
  where: { arity: 3, shape: "elementwise", cycles: 1 },
  clamp: { arity: 1, shape: "elementwise", cycles: 2 },
  exp: { arity: 1, shape: "elementwise", cycles: 4 },
  log: { arity: 1, shape: "elementwise", cycles: 4 },
  sqrt: { arity: 1, shape: "elementwise", cycles: 4 },
  abs: { arity: 1, shape: "elementwise", cycles: 1 },
  sigmoid: { arity: 1, shape: "elementwise", cycles: 6 },
  cos: { arity: 1, shape: "elementwise", cycles: 6 },
  sin: { arity: 1, shape: "elementwise", cycles: 6 },
  relu: { arity: 1, shape: "elementwise", cycles: 1 },
  cast: { arity: 1, shape: "elementwise", cycles: 1 },
  fill: { arity: 0, shape: "elementwise", cycles: 1 },
  iota: { arity: 0, shape: "elementwise", cycles: 1 },
  sum: { arity: 1, shape: "reduce", cycles: 1 },
  max: { arity: 1, shape: "reduce", cycles: 1 },
  min: { arity: 1, shape: "reduce", cycles: 1 },
  softmax: { arity: 1, shape: "row", cycles: 11 },
});

/** Ops that may take a scalar instead of their second tensor operand (in epilogues and `scalars`). */
export const SCALAR_OPS: ReadonlySet<string> = new Set(["add", "sub", "mul", "div", "maximum", "minimum"]);
