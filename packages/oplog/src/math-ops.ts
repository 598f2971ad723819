import type { Dtype } from "./schema.js";

// The math ops of the kernel language, defined once. A `math` op record names one of them
// (`params.op`), so the table is part of the op log's contract between the two phases: phase 1
// (the `tl` calls of @kb/tl, the PE_MATH timing and command checks of @kb/components) and phase 2
// (the evaluation of @kb/data-executor) read the same entry. A new elementwise op is one entry
// below (and its typing line in @kb/tl's math-calls.ts).

/**
 * How an op's output shape follows from the shape it works on (`MATH_SHAPES`): `elementwise`
 * keeps it, `reduce` makes the axis 1, `row` reads whole lines along the axis and keeps the shape
 * (softmax).
 */
export type MathShape = "elementwise" | "reduce" | "row";

/** A shape rule: whether the op works along an axis, and its output shape. */
export interface MathShapeRule {
  /** The op takes an `axis` (default the last); the record's `axis` is null otherwise. */
  readonly axis: boolean;
  /**
   * The output shape for an op over `shape` (the command's `shape`: its inputs') along `axis`
   * (a non-negative axis, or null when `axis` is false).
   */
  readonly output: (shape: readonly number[], axis: number | null) => number[];
}

/** The shape rules by {@link MathShape}. */
export const MATH_SHAPES: Readonly<Record<MathShape, MathShapeRule>> = Object.freeze({
  elementwise: { axis: false, output: (shape) => [...shape] },
  reduce: { axis: true, output: (shape, axis) => shape.map((size, i) => (i === axis ? 1 : size)) },
  row: { axis: true, output: (shape) => [...shape] },
});

/**
 * The output dtype of an op from its tensor operands' dtypes (one per operand, in order) and,
 * for an op that takes one (`target` in its entry), the call's target dtype.
 */
export type MathDtypeRule = (inputs: readonly Dtype[], target: Dtype | undefined) => Dtype;

/**
 * An elementwise op on f64 values: its tensor operands' elements first, then its scalars (a
 * scalar that replaces the last operand, then its `params`), in order; `index` is the element's
 * flat index (`iota`). Missing arguments are 0. Phase 2 rounds the result once to the output
 * dtype.
 */
export type ElementFn = (a: number, b: number, c: number, index: number) => number;

/**
 * A reduce or row op on one line of `length` f64 values along its axis: reads
 * `x[xBase + l * stride]` for l in [0, length) and writes `out[outBase + l * stride]` (a reduction
 * writes `out[outBase]` only). Phase 2 rounds each written value once to the output dtype.
 */
export type LineFn = (
  x: Float64Array,
  xBase: number,
  out: Float64Array,
  outBase: number,
  length: number,
  stride: number,
) => void;

interface MathOpBase {
  /** Tensor operands (scalars not counted). */
  readonly arity: number;
  /** A scalar (a number in the record's `scalars`) may replace the last tensor operand. */
  readonly scalar: boolean;
  /** Names of the immediate scalars the op always takes after its operands (`clamp`: lo, hi). */
  readonly params: readonly string[];
  /** The op takes a target dtype (`cast`; `fill` / `iota`: the constant's dtype). */
  readonly target: boolean;
  /** The output dtype. */
  readonly dtype: MathDtypeRule;
  /** Default PE_MATH cycles per vector of `lanes` elements (`pe_math_v1`'s `op_cycles` overrides). */
  readonly cycles: number;
  /** PE_MATH lane-tree passes per line along the axis (a reduction 1, softmax 2: max and sum). */
  readonly treePasses: number;
  /** Not a kernel call: `fill` / `iota` write `tl.zeros` / `tl.full` / `tl.arange` to TCM. */
  readonly internal: boolean;
}

/** An elementwise op: `element` gives each output element. */
export interface ElementwiseMathOp extends MathOpBase {
  readonly shape: "elementwise";
  readonly element: ElementFn;
}

/** An op along an axis: `line` evaluates one line. */
export interface LineMathOp extends MathOpBase {
  readonly shape: Exclude<MathShape, "elementwise">;
  readonly line: LineFn;
}

/** How a math op behaves: operands, shape and dtype rules, PE_MATH cost, phase-2 evaluation. */
export type MathOpInfo = ElementwiseMathOp | LineMathOp;

const sameAsInput: MathDtypeRule = (inputs) => inputs[0] as Dtype;
const asTarget: MathDtypeRule = (inputs, target) => target ?? (inputs[0] as Dtype);

const BASE = {
  arity: 1,
  scalar: false,
  params: [],
  target: false,
  dtype: sameAsInput,
  treePasses: 0,
} as const;

/** What sets an elementwise op apart from a unary one of the input's dtype. */
type ElementwiseOptions = Partial<Pick<MathOpBase, "arity" | "scalar" | "params" | "target" | "dtype">>;

/** An elementwise op a kernel calls (unary unless `options` say otherwise). */
function elementwise(
  cycles: number,
  element: ElementFn,
  options: ElementwiseOptions = {},
): ElementwiseMathOp & { readonly internal: false } {
  return { ...BASE, ...options, shape: "elementwise", cycles, element, internal: false };
}

/** Two operands; the second may be a scalar. */
const BINARY = { arity: 2, scalar: true } as const;

/** A PE_MATH constant writer (no operand, one scalar, the constant's dtype), not a kernel call. */
function constant(element: ElementFn): ElementwiseMathOp & { readonly internal: true } {
  const options = { arity: 0, params: ["value"], target: true, dtype: asTarget } as const;
  return { ...BASE, ...options, shape: "elementwise", cycles: 1, element, internal: true };
}

/** A reduction along the axis: `step` folds the line's values into `init` in index order. */
function reduction(
  init: number,
  step: (acc: number, value: number) => number,
): LineMathOp & { readonly internal: false } {
  const line: LineFn = (x, xBase, out, outBase, length, stride) => {
    let acc = init;
    for (let l = 0; l < length; l++) acc = step(acc, x[xBase + l * stride] as number);
    out[outBase] = acc;
  };
  return { ...BASE, shape: "reduce", cycles: 1, treePasses: 1, line, internal: false };
}

/** softmax of one line in f64: max, exp of the differences, their sum, division. */
const softmaxLine: LineFn = (x, xBase, out, outBase, length, stride) => {
  let max = Number.NEGATIVE_INFINITY;
  for (let l = 0; l < length; l++) max = Math.max(max, x[xBase + l * stride] as number);
  let sum = 0;
  for (let l = 0; l < length; l++) {
    const e = Math.exp((x[xBase + l * stride] as number) - max);
    out[outBase + l * stride] = e;
    sum += e;
  }
  for (let l = 0; l < length; l++) out[outBase + l * stride] = (out[outBase + l * stride] as number) / sum;
};

// The table. Order matters only for listings (error messages, `PUBLIC_MATH_OPS`).
const TABLE = {
  add: elementwise(1, (a, b) => a + b, BINARY),
  sub: elementwise(1, (a, b) => a - b, BINARY),
  mul: elementwise(1, (a, b) => a * b, BINARY),
  div: elementwise(4, (a, b) => a / b, BINARY),
  // A NaN on either side gives NaN; on a tie (-0, +0) the first operand.
  maximum: elementwise(1, (a, b) => (a >= b || Number.isNaN(a) ? a : b), BINARY),
  minimum: elementwise(1, (a, b) => (a <= b || Number.isNaN(a) ? a : b), BINARY),
  // The f64 product is rounded before the add (no fused multiply-add).
  fma: elementwise(1, (a, b, c) => a * b + c, { arity: 3 }),
  // NaN counts as true; the output has the values' dtype.
  where: elementwise(1, (cond, a, b) => (cond !== 0 ? a : b), {
    arity: 3,
    dtype: (inputs) => inputs[1] as Dtype,
  }),
  clamp: elementwise(2, (x, lo, hi) => Math.min(Math.max(x, lo), hi), { params: ["lo", "hi"] }),
  exp: elementwise(4, Math.exp),
  log: elementwise(4, Math.log),
  sqrt: elementwise(4, Math.sqrt),
  abs: elementwise(1, Math.abs),
  sigmoid: elementwise(6, (x) => 1 / (1 + Math.exp(-x))),
  cos: elementwise(6, Math.cos),
  sin: elementwise(6, Math.sin),
  relu: elementwise(1, (x) => Math.max(x, 0)),
  // The value itself: phase 2's one rounding to the target dtype is the conversion.
  cast: elementwise(1, (x) => x, { target: true, dtype: asTarget }),
  fill: constant((value) => value),
  iota: constant((start, _b, _c, index) => start + index),
  sum: reduction(0, (acc, value) => acc + value),
  max: reduction(Number.NEGATIVE_INFINITY, Math.max),
  min: reduction(Number.POSITIVE_INFINITY, Math.min),
  // One op: max, subtract, exp, sum and divide along the axis.
  softmax: { ...BASE, shape: "row", cycles: 11, treePasses: 2, line: softmaxLine, internal: false },
} satisfies Record<string, MathOpInfo>;

/** The name of a math op of the table. */
export type MathOpName = keyof typeof TABLE;

/** The name of a math op a kernel calls (`tl.exp`, ...): every op but the internal `fill` / `iota`. */
export type PublicMathOpName = {
  [K in MathOpName]: (typeof TABLE)[K] extends { readonly internal: true } ? never : K;
}[MathOpName];

/**
 * The math ops of the tl surface (ADR-0046) that PE_MATH executes, by name, in table order.
 * softmax is one op; `fill` writes `scalars[0]` to every element and `iota` `scalars[0] + i` to
 * element i (`tl.zeros` / `tl.full` / `tl.arange` materialised in TCM); `cast` converts
 * `inputDtype` to `dtype`. The object has no prototype, so any string indexes it safely.
 */
export const MATH_OPS: Readonly<Record<string, MathOpInfo>> = Object.freeze(
  Object.assign(Object.create(null) as Record<string, MathOpInfo>, TABLE),
);

/** Names of the ops a kernel calls, in table order (every op but `fill` and `iota`). */
export const PUBLIC_MATH_OPS: readonly PublicMathOpName[] = Object.freeze(
  Object.entries(TABLE)
    .filter(([, info]) => !info.internal)
    .map(([name]) => name as PublicMathOpName),
);

/** Ops that may take a scalar instead of their last tensor operand (in epilogues and `scalars`). */
export const SCALAR_OPS: ReadonlySet<string> = new Set(
  Object.entries(TABLE)
    .filter(([, info]) => info.scalar)
    .map(([name]) => name),
);

/** The output shape of `info` over `shape` along `axis` (non-negative, or null without an axis). */
export function mathOutputShape(info: MathOpInfo, shape: readonly number[], axis: number | null): number[] {
  return MATH_SHAPES[info.shape].output(shape, axis);
}
