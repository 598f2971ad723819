import type { Dtype } from "./dtype.js";
import { erfinv } from "./libdevice.js";
import {
  argLine,
  cumprodLine,
  cumsumLine,
  erf,
  gelu,
  type LineFn,
  pow,
  silu,
  softmaxLine,
} from "./math-functions.js";
import { rand, randint, randn } from "./philox.js";

export type { LineFn } from "./math-functions.js";

// The math ops of the kernel language, defined once. A `math` op record names one of them
// (`params.op`), so the table is part of the op log's contract between the two phases: phase 1
// (the `tl` calls of @kb/tl, the PE_MATH timing and command checks of @kb/components) and phase 2
// (the evaluation of @kb/data-executor) read the same entry. A new elementwise op is one entry
// below (and its typing line in @kb/tl's math-calls.ts).

/**
 * How an op's output shape follows from the shape it works on (`MATH_SHAPES`): `elementwise`
 * keeps it (the operands' broadcast shape, numpy's rules), `reduce` makes the axis 1, `row` reads
 * whole lines along the axis and keeps the shape (softmax, cumsum), `swap` exchanges the axis and
 * the dimension its first param names (a transpose that moves bytes).
 */
export type MathShape = "elementwise" | "reduce" | "row" | "swap";

/** A shape rule: whether the op works along an axis, and its output shape. */
export interface MathShapeRule {
  /** The op takes an `axis` (default the last); the record's `axis` is null otherwise. */
  readonly axis: boolean;
  /**
   * The output shape for an op over `shape` (the command's `shape`: the broadcast shape of an
   * elementwise op's operands, the input's otherwise) along `axis` (a non-negative axis, or null
   * when `axis` is false), with the op's immediate `params` (`swap`: the other dimension).
   */
  readonly output: (shape: readonly number[], axis: number | null, params: readonly number[]) => number[];
}

/** The shape rules by {@link MathShape}. */
export const MATH_SHAPES: Readonly<Record<MathShape, MathShapeRule>> = Object.freeze({
  elementwise: { axis: false, output: (shape) => [...shape] },
  reduce: { axis: true, output: (shape, axis) => shape.map((size, i) => (i === axis ? 1 : size)) },
  row: { axis: true, output: (shape) => [...shape] },
  swap: {
    axis: true,
    output: (shape, axis, [other = axis ?? 0]) =>
      shape.map((size, i) =>
        i === axis ? (shape[other] as number) : i === other ? (shape[axis ?? 0] as number) : size,
      ),
  },
});

/**
 * The output dtype of an op from its tensor operands' dtypes (one per operand, in order) and,
 * for an op that takes one (`target` in its entry), the call's target dtype.
 */
export type MathDtypeRule = (inputs: readonly Dtype[], target: Dtype | undefined) => Dtype;

/**
 * An elementwise op on f64 values: its operands' elements in order (a scalar standing in for one
 * of them at its place), then its `params`; `index` is the element's flat index (`iota`). Missing
 * arguments are 0. Phase 2 rounds the result once to the output dtype.
 */
export type ElementFn = (a: number, b: number, c: number, index: number) => number;

interface MathOpBase {
  /** Tensor operands (scalars not counted). */
  readonly arity: number;
  /**
   * A scalar (the first number of the record's `scalars`) may replace one tensor operand: the
   * last, or the one at the record's `scalar_index` (`tl.sub(0, x)`).
   */
  readonly scalar: boolean;
  /** The dtypes the tensor operands may have (all of them when null). */
  readonly inputDtypes: readonly Dtype[] | null;
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
  readonly shape: "reduce" | "row";
  readonly line: LineFn;
}

/** A transpose of two axes (the axis and `params[0]`): every element moves, none changes. */
export interface SwapMathOp extends MathOpBase {
  readonly shape: "swap";
}

/** How a math op behaves: operands, shape and dtype rules, PE_MATH cost, phase-2 evaluation. */
export type MathOpInfo = ElementwiseMathOp | LineMathOp | SwapMathOp;

const sameAsInput: MathDtypeRule = (inputs) => inputs[0] as Dtype;
const asTarget: MathDtypeRule = (inputs, target) => target ?? (inputs[0] as Dtype);

const BASE = {
  arity: 1,
  scalar: false,
  inputDtypes: null,
  params: [],
  target: false,
  dtype: sameAsInput,
  treePasses: 0,
} as const;

/** What sets an elementwise op apart from a unary one of the input's dtype. */
type ElementwiseOptions = Partial<
  Pick<MathOpBase, "arity" | "scalar" | "inputDtypes" | "params" | "target" | "dtype">
>;

/** An elementwise op a kernel calls (unary unless `options` say otherwise). */
function elementwise(
  cycles: number,
  element: ElementFn,
  options: ElementwiseOptions = {},
): ElementwiseMathOp & { readonly internal: false } {
  return { ...BASE, ...options, shape: "elementwise", cycles, element, internal: false };
}

/** Two operands; either may be a scalar. */
const BINARY = { arity: 2, scalar: true } as const;

/** The booleans: what comparisons produce. */
const toBool: MathDtypeRule = () => "i1";

/** A comparison: two operands (either may be a scalar) of one dtype, an `i1` result; NaN compares false but in `ne`. */
const COMPARISON = { ...BINARY, dtype: toBool } as const;

/** A bitwise op of booleans and integers (logical on `i1`'s 0 and 1). */
const BITWISE = {
  ...BINARY,
  inputDtypes: ["i1", "i8", "i32", "u32", "u8", "u16", "i16", "i64", "u64"],
} as const;

/**
 * Triton's random numbers of (seed, offsets) (philox.ts): the seed a number (or a tensor) in
 * operand 0, the offsets an i32 or u32 tensor; f32 results unless said otherwise.
 */
const toF32: MathDtypeRule = () => "f32";
const RANDOM = { ...BINARY, inputDtypes: ["i32", "u32"], dtype: toF32 } as const;

/** A binary op of the integer dtypes only (shifts). */
const INTEGER_BINARY = {
  ...BINARY,
  inputDtypes: ["i8", "i32", "u32", "u8", "u16", "i16", "i64", "u64"],
} as const;

/** A PE_MATH writer of a tensor that reads no operand (one scalar, the constant's dtype), not a kernel call. */
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

/**
 * The index (i32) of a line's extreme value along the axis: one compare and one index select per
 * vector (2 cycles), and a lane tree that carries (value, index) pairs (1 pass).
 */
function argReduction(
  better: (value: number, best: number) => boolean,
): LineMathOp & { readonly internal: false } {
  const line = argLine(better);
  return { ...BASE, shape: "reduce", dtype: () => "i32", cycles: 2, treePasses: 1, line, internal: false };
}

// The table. Order matters only for listings (error messages, `PUBLIC_MATH_OPS`). PE_MATH cycles
// per vector: 1 for an ALU op (add, compare, select, bitwise), 4 for one special-function-unit op
// (div, exp, exp2, log, log2, sqrt, rsqrt), 6 for a short polynomial or two SFU ops (sigmoid,
// cos, sin, tanh, erf), and compositions add up (gelu = erf + 2 ALU ops, silu = sigmoid + a mul,
// pow = log2 + mul + exp2). docs/latency-model.md lists them.
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
  // cond is i1 (or, as before i1 existed, of the values' dtype: nonzero and NaN count as true);
  // the output has the values' dtype.
  where: elementwise(1, (cond, a, b) => (cond !== 0 ? a : b), {
    arity: 3,
    dtype: (inputs) => inputs[1] as Dtype,
  }),
  // IEEE comparisons: a NaN on either side is false, but for ne.
  lt: elementwise(1, (a, b) => (a < b ? 1 : 0), COMPARISON),
  le: elementwise(1, (a, b) => (a <= b ? 1 : 0), COMPARISON),
  gt: elementwise(1, (a, b) => (a > b ? 1 : 0), COMPARISON),
  ge: elementwise(1, (a, b) => (a >= b ? 1 : 0), COMPARISON),
  eq: elementwise(1, (a, b) => (a === b ? 1 : 0), COMPARISON),
  ne: elementwise(1, (a, b) => (a !== b ? 1 : 0), COMPARISON),
  and: elementwise(1, (a, b) => a & b, BITWISE),
  or: elementwise(1, (a, b) => a | b, BITWISE),
  xor: elementwise(1, (a, b) => a ^ b, BITWISE),
  // Logical not of a boolean; bitwise (`~a`) on the integer dtypes (integer-ops.ts).
  not: elementwise(1, (a) => (a === 0 ? 1 : 0), { inputDtypes: BITWISE.inputDtypes }),
  // C's pow (1 ** NaN is 1): log2, a multiply and exp2.
  pow: elementwise(9, pow, BINARY),
  clamp: elementwise(2, (x, lo, hi) => Math.min(Math.max(x, lo), hi), { params: ["lo", "hi"] }),
  exp: elementwise(4, Math.exp),
  log: elementwise(4, Math.log),
  sqrt: elementwise(4, Math.sqrt),
  rsqrt: elementwise(4, (x) => 1 / Math.sqrt(x)),
  exp2: elementwise(4, (x) => 2 ** x),
  log2: elementwise(4, Math.log2),
  abs: elementwise(1, Math.abs),
  sigmoid: elementwise(6, (x) => 1 / (1 + Math.exp(-x))),
  cos: elementwise(6, Math.cos),
  sin: elementwise(6, Math.sin),
  relu: elementwise(1, (x) => Math.max(x, 0)),
  tanh: elementwise(6, Math.tanh),
  erf: elementwise(6, erf),
  // The exact (erf) form, PyTorch's default (approximate="none").
  gelu: elementwise(8, gelu),
  silu: elementwise(7, silu),
  // The value itself: phase 2's one rounding to the target dtype is the conversion (to an
  // integer dtype the value is first truncated toward zero, as Triton's fptosi: math-eval.ts).
  cast: elementwise(1, (x) => x, { target: true, dtype: asTarget }),
  fill: constant((value) => value),
  iota: constant((start, _b, _c, index) => start + index),
  // The operand as is, broadcast to the output shape (`tl.broadcastTo`); not a kernel call.
  copy: { ...BASE, shape: "elementwise", cycles: 1, element: (x) => x, internal: true },
  // The operand with its axis and dimension `params[0]` exchanged (`tl.trans` of two axes that
  // are not the last two); not a kernel call.
  transpose: { ...BASE, shape: "swap", params: ["dim1"], cycles: 1, internal: true },
  sum: reduction(0, (acc, value) => acc + value),
  max: reduction(Number.NEGATIVE_INFINITY, Math.max),
  min: reduction(Number.POSITIVE_INFINITY, Math.min),
  argmax: argReduction((value, best) => value > best),
  argmin: argReduction((value, best) => value < best),
  // One op: max, subtract, exp, sum and divide along the axis.
  softmax: { ...BASE, shape: "row", cycles: 11, treePasses: 2, line: softmaxLine, internal: false },
  // Inclusive prefix sums along the axis: an add per vector (carrying the previous vector's total)
  // and a work-efficient scan over the lanes (up-sweep and down-sweep: 2 tree passes).
  cumsum: { ...BASE, shape: "row", cycles: 1, treePasses: 2, line: cumsumLine, internal: false },
  // The libdevice subset (Triton's tl.extra.libdevice / tl.math): one SFU op and a short
  // polynomial is 6 cycles (asin, acos, atan, sinh, cosh, log1p, expm1, cbrt; hypot: two
  // multiplies, an add and a sqrt), two SFU ops and a polynomial 10 (atan2: a division and atan;
  // erfinv: a log, a sqrt and a polynomial).
  asin: elementwise(6, Math.asin),
  acos: elementwise(6, Math.acos),
  atan: elementwise(6, Math.atan),
  atan2: elementwise(10, Math.atan2, BINARY),
  sinh: elementwise(6, Math.sinh),
  cosh: elementwise(6, Math.cosh),
  erfinv: elementwise(10, erfinv),
  log1p: elementwise(6, Math.log1p),
  expm1: elementwise(6, Math.expm1),
  cbrt: elementwise(6, Math.cbrt),
  hypot: elementwise(6, (a, b) => Math.hypot(a, b), BINARY),
  // C's remainder, the sign of the dividend (Triton's `%`: frem, srem / urem): a division, a
  // multiply and a subtract. The integer forms of this and the shifts are in integer-ops.ts.
  mod: elementwise(6, (a, b) => a % b, BINARY),
  shl: elementwise(1, (a, n) => a * 2 ** n, INTEGER_BINARY),
  shr: elementwise(1, (a, n) => Math.floor(a / 2 ** n), INTEGER_BINARY),
  floor: elementwise(1, Math.floor),
  ceil: elementwise(1, Math.ceil),
  // Philox 4x32-10: 10 rounds of 4 multiplies (2 high, 2 low halves), 2 xors into each of 2 words
  // and 2 key adds = 10 ALU ops a round, 100 a word; rand adds Triton's conversion to [0, 1) (a
  // select of -x - 1, a conversion and a multiply: 3); randn converts two words (6) and adds
  // Box-Muller: a max 1, log 4, a multiply 1, sqrt 4, a multiply 1, cos 6, a multiply 1 (18).
  randint: elementwise(100, randint, { ...RANDOM, dtype: (): Dtype => "u32" }),
  rand: elementwise(103, rand, RANDOM),
  randn: elementwise(124, randn, RANDOM),
  // Inclusive prefix products (Triton's tl.cumprod), as cumsum with a multiply; on an integer
  // dtype each product wraps, exactly (integer-ops.ts, `integerLine`).
  cumprod: {
    ...BASE,
    shape: "row",
    cycles: 1,
    treePasses: 2,
    line: cumprodLine,
    internal: false,
  },
} satisfies Record<string, MathOpInfo>;

/** The name of a math op of the table. */
export type MathOpName = keyof typeof TABLE;

/** The name of a math op a kernel calls (`tl.exp`, ...): every op but the internal ones (`fill`, `iota`, `copy`, `transpose`). */
export type PublicMathOpName = {
  [K in MathOpName]: (typeof TABLE)[K] extends { readonly internal: true } ? never : K;
}[MathOpName];

/**
 * The math ops of the tl surface (ADR-0046) that PE_MATH executes, by name, in table order.
 * softmax is one op; `fill` writes `scalars[0]` to every element and `iota` `scalars[0] + i` to
 * element i (`tl.zeros` / `tl.full` / `tl.arange` materialised in TCM); `copy` writes its operand
 * broadcast (`tl.broadcastTo`), `transpose` swaps two axes (`tl.trans`); `cast` converts
 * `inputDtype` to `dtype`. The object has no prototype, so any string indexes it safely.
 */
export const MATH_OPS: Readonly<Record<string, MathOpInfo>> = Object.freeze(
  Object.assign(Object.create(null) as Record<string, MathOpInfo>, TABLE),
);

/** Names of the ops a kernel calls, in table order (every op but the internal ones). */
export const PUBLIC_MATH_OPS: readonly PublicMathOpName[] = Object.freeze(
  Object.entries(TABLE)
    .filter(([, info]) => !info.internal)
    .map(([name]) => name as PublicMathOpName),
);

/** Ops that may take a scalar instead of one tensor operand (in epilogues and `scalars`: the last one). */
export const SCALAR_OPS: ReadonlySet<string> = new Set(
  Object.entries(TABLE)
    .filter(([, info]) => info.scalar)
    .map(([name]) => name),
);

/**
 * The output shape of `info` over `shape` along `axis` (non-negative, or null without an axis),
 * with its immediate `params` (a `swap` op's other dimension).
 */
export function mathOutputShape(
  info: MathOpInfo,
  shape: readonly number[],
  axis: number | null,
  params: readonly number[] = [],
): number[] {
  return MATH_SHAPES[info.shape].output(shape, axis, params);
}
