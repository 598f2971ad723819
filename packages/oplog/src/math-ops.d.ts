import { type LineFn } from "./math-functions.js";
import type { Dtype } from "./schema.js";
export type { LineFn } from "./math-functions.js";
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
export declare const MATH_SHAPES: Readonly<Record<MathShape, MathShapeRule>>;
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
declare const TABLE: {
    add: ElementwiseMathOp & {
        readonly internal: false;
    };
    sub: ElementwiseMathOp & {
        readonly internal: false;
    };
    mul: ElementwiseMathOp & {
        readonly internal: false;
    };
    div: ElementwiseMathOp & {
        readonly internal: false;
    };
    maximum: ElementwiseMathOp & {
        readonly internal: false;
    };
    minimum: ElementwiseMathOp & {
        readonly internal: false;
    };
    fma: ElementwiseMathOp & {
        readonly internal: false;
    };
    where: ElementwiseMathOp & {
        readonly internal: false;
    };
    lt: ElementwiseMathOp & {
        readonly internal: false;
    };
    le: ElementwiseMathOp & {
        readonly internal: false;
    };
    gt: ElementwiseMathOp & {
        readonly internal: false;
    };
    ge: ElementwiseMathOp & {
        readonly internal: false;
    };
    eq: ElementwiseMathOp & {
        readonly internal: false;
    };
    ne: ElementwiseMathOp & {
        readonly internal: false;
    };
    and: ElementwiseMathOp & {
        readonly internal: false;
    };
    or: ElementwiseMathOp & {
        readonly internal: false;
    };
    xor: ElementwiseMathOp & {
        readonly internal: false;
    };
    not: ElementwiseMathOp & {
        readonly internal: false;
    };
    pow: ElementwiseMathOp & {
        readonly internal: false;
    };
    clamp: ElementwiseMathOp & {
        readonly internal: false;
    };
    exp: ElementwiseMathOp & {
        readonly internal: false;
    };
    log: ElementwiseMathOp & {
        readonly internal: false;
    };
    sqrt: ElementwiseMathOp & {
        readonly internal: false;
    };
    rsqrt: ElementwiseMathOp & {
        readonly internal: false;
    };
    exp2: ElementwiseMathOp & {
        readonly internal: false;
    };
    log2: ElementwiseMathOp & {
        readonly internal: false;
    };
    abs: ElementwiseMathOp & {
        readonly internal: false;
    };
    sigmoid: ElementwiseMathOp & {
        readonly internal: false;
    };
    cos: ElementwiseMathOp & {
        readonly internal: false;
    };
    sin: ElementwiseMathOp & {
        readonly internal: false;
    };
    relu: ElementwiseMathOp & {
        readonly internal: false;
    };
    tanh: ElementwiseMathOp & {
        readonly internal: false;
    };
    erf: ElementwiseMathOp & {
        readonly internal: false;
    };
    gelu: ElementwiseMathOp & {
        readonly internal: false;
    };
    silu: ElementwiseMathOp & {
        readonly internal: false;
    };
    cast: ElementwiseMathOp & {
        readonly internal: false;
    };
    fill: ElementwiseMathOp & {
        readonly internal: true;
    };
    iota: ElementwiseMathOp & {
        readonly internal: true;
    };
    copy: {
        shape: "elementwise";
        cycles: number;
        element: (x: number) => number;
        internal: true;
        arity: 1;
        scalar: false;
        inputDtypes: null;
        params: readonly [];
        target: false;
        dtype: MathDtypeRule;
        treePasses: 0;
    };
    transpose: {
        shape: "swap";
        params: string[];
        cycles: number;
        internal: true;
        arity: 1;
        scalar: false;
        inputDtypes: null;
        target: false;
        dtype: MathDtypeRule;
        treePasses: 0;
    };
    sum: LineMathOp & {
        readonly internal: false;
    };
    max: LineMathOp & {
        readonly internal: false;
    };
    min: LineMathOp & {
        readonly internal: false;
    };
    argmax: LineMathOp & {
        readonly internal: false;
    };
    argmin: LineMathOp & {
        readonly internal: false;
    };
    softmax: {
        shape: "row";
        cycles: number;
        treePasses: number;
        line: LineFn;
        internal: false;
        arity: 1;
        scalar: false;
        inputDtypes: null;
        params: readonly [];
        target: false;
        dtype: MathDtypeRule;
    };
    cumsum: {
        shape: "row";
        cycles: number;
        treePasses: number;
        line: LineFn;
        internal: false;
        arity: 1;
        scalar: false;
        inputDtypes: null;
        params: readonly [];
        target: false;
        dtype: MathDtypeRule;
    };
    asin: ElementwiseMathOp & {
        readonly internal: false;
    };
    acos: ElementwiseMathOp & {
        readonly internal: false;
    };
    atan: ElementwiseMathOp & {
        readonly internal: false;
    };
    atan2: ElementwiseMathOp & {
        readonly internal: false;
    };
    sinh: ElementwiseMathOp & {
        readonly internal: false;
    };
    cosh: ElementwiseMathOp & {
        readonly internal: false;
    };
    erfinv: ElementwiseMathOp & {
        readonly internal: false;
    };
    log1p: ElementwiseMathOp & {
        readonly internal: false;
    };
    expm1: ElementwiseMathOp & {
        readonly internal: false;
    };
    cbrt: ElementwiseMathOp & {
        readonly internal: false;
    };
    hypot: ElementwiseMathOp & {
        readonly internal: false;
    };
    mod: ElementwiseMathOp & {
        readonly internal: false;
    };
    shl: ElementwiseMathOp & {
        readonly internal: false;
    };
    shr: ElementwiseMathOp & {
        readonly internal: false;
    };
    floor: ElementwiseMathOp & {
        readonly internal: false;
    };
    ceil: ElementwiseMathOp & {
        readonly internal: false;
    };
    randint: ElementwiseMathOp & {
        readonly internal: false;
    };
    rand: ElementwiseMathOp & {
        readonly internal: false;
    };
    randn: ElementwiseMathOp & {
        readonly internal: false;
    };
};
/** The name of a math op of the table. */
export type MathOpName = keyof typeof TABLE;
/** The name of a math op a kernel calls (`tl.exp`, ...): every op but the internal ones (`fill`, `iota`, `copy`, `transpose`). */
export type PublicMathOpName = {
    [K in MathOpName]: (typeof TABLE)[K] extends {
        readonly internal: true;
    } ? never : K;
}[MathOpName];
/**
 * The math ops of the tl surface (ADR-0046) that PE_MATH executes, by name, in table order.
 * softmax is one op; `fill` writes `scalars[0]` to every element and `iota` `scalars[0] + i` to
 * element i (`tl.zeros` / `tl.full` / `tl.arange` materialised in TCM); `copy` writes its operand
 * broadcast (`tl.broadcastTo`), `transpose` swaps two axes (`tl.trans`); `cast` converts
 * `inputDtype` to `dtype`. The object has no prototype, so any string indexes it safely.
 */
export declare const MATH_OPS: Readonly<Record<string, MathOpInfo>>;
/** Names of the ops a kernel calls, in table order (every op but the internal ones). */
export declare const PUBLIC_MATH_OPS: readonly PublicMathOpName[];
/** Ops that may take a scalar instead of one tensor operand (in epilogues and `scalars`: the last one). */
export declare const SCALAR_OPS: ReadonlySet<string>;
/**
 * The output shape of `info` over `shape` along `axis` (non-negative, or null without an axis),
 * with its immediate `params` (a `swap` op's other dimension).
 */
export declare function mathOutputShape(info: MathOpInfo, shape: readonly number[], axis: number | null, params?: readonly number[]): number[];
