import {
  MATH_OPS,
  MATH_SHAPES,
  type MathOpInfo,
  type MathScalar,
  mathScalar,
  PUBLIC_MATH_OPS,
  type PublicMathOpName,
} from "@kb/spec";
import type { Dtype } from "@kb/tensor";
import { runMath } from "./compute.js";
import type { TLContext } from "./context.js";
import type { TensorHandle } from "./handles.js";
import type { MathOptions } from "./options.js";
import { reduceAll } from "./reduce-all.js";
import { checkDtype } from "./validate.js";
import { whereNumbers } from "./where-numbers.js";

// The math calls of `tl` (blocking, one PE_MATH command each), made from the op table
// (`MATH_OPS` of @kb/oplog): a method per public op, whose arguments follow the op's entry in
// order: its tensor operands (one of them may be a number where the op takes a scalar: `tl.div(1,
// x)`), its `params` (clamp's lo, hi), its target dtype (cast), its axis (reduce and row ops,
// default -1; the reductions default to every axis, Triton's axis=None), then `{ out }`.
// Elementwise operands broadcast (numpy's rules). A new op needs its table entry and its typing
// line below.

/** A tensor operand, or a finite number (a BigInt: an exact integer, Python's int) where the op takes a scalar. */
type Operand = TensorHandle | number | bigint;

/** The math calls of `tl` (installed on `TLContext` by context.ts), in the op table's order. */
export interface MathCalls {
  /** `a + b` elementwise (broadcast); either side a tensor of one dtype with the other, or a finite number. */
  add(a: Operand, b: Operand, options?: MathOptions): Promise<TensorHandle>;
  /** `a - b` elementwise; either side a tensor or a finite number (`tl.sub(0, x)`). */
  sub(a: Operand, b: Operand, options?: MathOptions): Promise<TensorHandle>;
  /** `a * b` elementwise; either side a tensor or a finite number. */
  mul(a: Operand, b: Operand, options?: MathOptions): Promise<TensorHandle>;
  /** `a / b` elementwise; either side a tensor or a finite number (`tl.div(1, x)`). */
  div(a: Operand, b: Operand, options?: MathOptions): Promise<TensorHandle>;
  /** The larger of `a` and `b` (a NaN on either side gives NaN; `a` on a tie). */
  maximum(a: Operand, b: Operand, options?: MathOptions): Promise<TensorHandle>;
  /** The smaller of `a` and `b` (a NaN on either side gives NaN; `a` on a tie). */
  minimum(a: Operand, b: Operand, options?: MathOptions): Promise<TensorHandle>;
  /** `a * b + c` (broadcast). */
  fma(a: TensorHandle, b: TensorHandle, c: TensorHandle, options?: MathOptions): Promise<TensorHandle>;
  /**
   * `cond ? a : b` elementwise (broadcast): cond an `i1` mask, or (as before i1 existed) a tensor
   * of the values' dtype, nonzero and NaN counting as true; `a` and `b` share a dtype. One of `a`,
   * `b` may be a number (Triton's `tl.where(mask, x, 0.0)`), taken in the other's dtype.
   */
  where(cond: TensorHandle, a: Operand, b: Operand, options?: MathOptions): Promise<TensorHandle>;
  /** `a < b` elementwise as `i1` (a NaN on either side: 0); either side may be a number. */
  lt(a: Operand, b: Operand, options?: MathOptions): Promise<TensorHandle>;
  /** `a <= b` as `i1`. */
  le(a: Operand, b: Operand, options?: MathOptions): Promise<TensorHandle>;
  /** `a > b` as `i1`. */
  gt(a: Operand, b: Operand, options?: MathOptions): Promise<TensorHandle>;
  /** `a >= b` as `i1`. */
  ge(a: Operand, b: Operand, options?: MathOptions): Promise<TensorHandle>;
  /** `a == b` as `i1` (NaN == NaN is 0). */
  eq(a: Operand, b: Operand, options?: MathOptions): Promise<TensorHandle>;
  /** `a != b` as `i1` (NaN != anything is 1). */
  ne(a: Operand, b: Operand, options?: MathOptions): Promise<TensorHandle>;
  /** Logical and of `i1` masks; bitwise and of `i8` / `i32` / `u32`. */
  and(a: Operand, b: Operand, options?: MathOptions): Promise<TensorHandle>;
  /** Logical or of `i1` masks; bitwise or of `i8` / `i32` / `u32`. */
  or(a: Operand, b: Operand, options?: MathOptions): Promise<TensorHandle>;
  /** Logical xor of `i1` masks; bitwise xor of `i8` / `i32` / `u32`. */
  xor(a: Operand, b: Operand, options?: MathOptions): Promise<TensorHandle>;
  /** Logical not of an `i1` mask; bitwise not (`~x`) of an integer tensor. */
  not(x: TensorHandle, options?: MathOptions): Promise<TensorHandle>;
  /** `a ** b` elementwise with C's rules (`pow(1, NaN)` is 1); either side may be a number. */
  pow(a: Operand, b: Operand, options?: MathOptions): Promise<TensorHandle>;
  /** `x` clamped to `[lo, hi]` (`lo <= hi`). */
  clamp(x: TensorHandle, lo: number, hi: number, options?: MathOptions): Promise<TensorHandle>;
  /** `e^x` elementwise. */
  exp(x: TensorHandle, options?: MathOptions): Promise<TensorHandle>;
  /** The natural logarithm elementwise. */
  log(x: TensorHandle, options?: MathOptions): Promise<TensorHandle>;
  /** The square root elementwise. */
  sqrt(x: TensorHandle, options?: MathOptions): Promise<TensorHandle>;
  /** `1 / sqrt(x)` elementwise. */
  rsqrt(x: TensorHandle, options?: MathOptions): Promise<TensorHandle>;
  /** `2^x` elementwise. */
  exp2(x: TensorHandle, options?: MathOptions): Promise<TensorHandle>;
  /** The base-2 logarithm elementwise. */
  log2(x: TensorHandle, options?: MathOptions): Promise<TensorHandle>;
  /** `|x|` elementwise. */
  abs(x: TensorHandle, options?: MathOptions): Promise<TensorHandle>;
  /** `1 / (1 + e^-x)` elementwise. */
  sigmoid(x: TensorHandle, options?: MathOptions): Promise<TensorHandle>;
  /** The cosine elementwise. */
  cos(x: TensorHandle, options?: MathOptions): Promise<TensorHandle>;
  /** The sine elementwise. */
  sin(x: TensorHandle, options?: MathOptions): Promise<TensorHandle>;
  /** `max(x, 0)` elementwise. */
  relu(x: TensorHandle, options?: MathOptions): Promise<TensorHandle>;
  /** The hyperbolic tangent elementwise. */
  tanh(x: TensorHandle, options?: MathOptions): Promise<TensorHandle>;
  /** The error function elementwise. */
  erf(x: TensorHandle, options?: MathOptions): Promise<TensorHandle>;
  /** GELU, exact (erf) form as PyTorch's default: `x / 2 * (1 + erf(x / sqrt 2))`. */
  gelu(x: TensorHandle, options?: MathOptions): Promise<TensorHandle>;
  /** SiLU (swish): `x * sigmoid(x)`. */
  silu(x: TensorHandle, options?: MathOptions): Promise<TensorHandle>;
  /** `x` converted to `dtype` (Triton's `x.to(dtype)`), rounding to nearest even. */
  cast(x: TensorHandle, dtype: Dtype, options?: MathOptions): Promise<TensorHandle>;
  /**
   * Sum along `axis` (that dimension becomes 1); without an axis, of every element (Triton's
   * `axis=None`: shape `[1, ..., 1]`).
   */
  sum(x: TensorHandle, axis?: number | MathOptions, options?: MathOptions): Promise<TensorHandle>;
  /** Maximum along `axis` (that dimension becomes 1); without an axis, of every element. */
  max(x: TensorHandle, axis?: number | MathOptions, options?: MathOptions): Promise<TensorHandle>;
  /** Minimum along `axis` (that dimension becomes 1); without an axis, of every element. */
  min(x: TensorHandle, axis?: number | MathOptions, options?: MathOptions): Promise<TensorHandle>;
  /**
   * The `i32` index of the maximum along `axis` (that dimension becomes 1): the first on ties, the
   * first NaN if any; without an axis, the flat (row-major) index over every element.
   */
  argmax(x: TensorHandle, axis?: number | MathOptions, options?: MathOptions): Promise<TensorHandle>;
  /** The `i32` index of the minimum along `axis` (without one, the flat index): the first on ties, the first NaN if any. */
  argmin(x: TensorHandle, axis?: number | MathOptions, options?: MathOptions): Promise<TensorHandle>;
  /** Softmax along `axis` (default 0, Triton's) as one PE_MATH op (phase 2: max, sub, exp, sum, div). */
  softmax(x: TensorHandle, axis?: number, options?: MathOptions): Promise<TensorHandle>;
  /** Inclusive prefix sums along `axis` (default 0, Triton's), same shape (summed in f64, rounded once). */
  cumsum(x: TensorHandle, axis?: number, options?: MathOptions): Promise<TensorHandle>;
  /** Inclusive prefix products along `axis` (default 0, Triton's `tl.cumprod`): floats multiplied in f64 and rounded once; integers exact and wrapping. */
  cumprod(x: TensorHandle, axis?: number, options?: MathOptions): Promise<TensorHandle>;
  /** The arcsine elementwise (libdevice `asin`): NaN outside [-1, 1]. */
  asin(x: TensorHandle, options?: MathOptions): Promise<TensorHandle>;
  /** The arccosine elementwise (libdevice `acos`). */
  acos(x: TensorHandle, options?: MathOptions): Promise<TensorHandle>;
  /** The arctangent elementwise (libdevice `atan`). */
  atan(x: TensorHandle, options?: MathOptions): Promise<TensorHandle>;
  /** The angle of the point `(x, y)`, `atan2(y, x)` (libdevice `atan2`); either side may be a number. */
  atan2(y: Operand, x: Operand, options?: MathOptions): Promise<TensorHandle>;
  /** The hyperbolic sine elementwise. */
  sinh(x: TensorHandle, options?: MathOptions): Promise<TensorHandle>;
  /** The hyperbolic cosine elementwise. */
  cosh(x: TensorHandle, options?: MathOptions): Promise<TensorHandle>;
  /** The inverse error function elementwise (libdevice `erfinv`): ±1 -> ±Inf, NaN outside [-1, 1]. */
  erfinv(x: TensorHandle, options?: MathOptions): Promise<TensorHandle>;
  /** `log(1 + x)` elementwise, accurate near 0 (libdevice `log1p`). */
  log1p(x: TensorHandle, options?: MathOptions): Promise<TensorHandle>;
  /** `e^x - 1` elementwise, accurate near 0 (libdevice `expm1`). */
  expm1(x: TensorHandle, options?: MathOptions): Promise<TensorHandle>;
  /** The cube root elementwise (libdevice `cbrt`; negative for negative x). */
  cbrt(x: TensorHandle, options?: MathOptions): Promise<TensorHandle>;
  /** `sqrt(a^2 + b^2)` without overflow in the squares (libdevice `hypot`); either side may be a number. */
  hypot(a: Operand, b: Operand, options?: MathOptions): Promise<TensorHandle>;
  /** `a % b` with the dividend's sign (Triton's `%`: C's fmod on floats, srem / urem on integers). */
  mod(a: Operand, b: Operand, options?: MathOptions): Promise<TensorHandle>;
  /** `a << n` on integers (Triton's `<<`): wraps; amounts outside [0, bits) give 0. */
  shl(a: Operand, n: Operand, options?: MathOptions): Promise<TensorHandle>;
  /** `a >> n` on integers (Triton's `>>`): arithmetic on signed, logical on unsigned dtypes. */
  shr(a: Operand, n: Operand, options?: MathOptions): Promise<TensorHandle>;
  /** The largest integer <= `x` elementwise (Triton's `tl.floor`). */
  floor(x: TensorHandle, options?: MathOptions): Promise<TensorHandle>;
  /** The smallest integer >= `x` elementwise (Triton's `tl.ceil`). */
  ceil(x: TensorHandle, options?: MathOptions): Promise<TensorHandle>;
  /** Triton's `tl.randint(seed, offsets)`: Philox 4x32-10's first word per offset, `u32`. */
  randint(seed: Operand, offsets: Operand, options?: MathOptions): Promise<TensorHandle>;
  /** Triton's `tl.rand(seed, offsets)`: uniform f32 in [0, 1), equal bit for bit to Triton's. */
  rand(seed: Operand, offsets: Operand, options?: MathOptions): Promise<TensorHandle>;
  /** Triton's `tl.randn(seed, offsets)`: a standard normal f32 (Box-Muller), as Triton's. */
  randn(seed: Operand, offsets: Operand, options?: MathOptions): Promise<TensorHandle>;
}

/**
 * `true` when {@link MathCalls} types exactly the table's public ops. Otherwise this does not
 * compile, and the error names the op without a typing (`missing`) or the typing without an op.
 * @internal
 */
export const MATH_CALLS_TYPED: SameNames<PublicMathOpName, keyof MathCalls> = true;

type SameNames<Table, Typed> = [Exclude<Table, Typed>, Exclude<Typed, Table>] extends [never, never]
  ? true
  : { missing: Exclude<Table, Typed>; extra: Exclude<Typed, Table> };

/** Checks of a call's arguments beyond the table's, made when the call is made. */
const CALL_CHECKS: Partial<
  Record<
    PublicMathOpName,
    (tl: TLContext, inputs: readonly TensorHandle[], scalars: readonly number[]) => void
  >
> = {
  clamp(tl, _inputs, [lo, hi]) {
    if (!((lo as number) <= (hi as number)))
      throw tl._error("TL_INVALID_CALL", `tl.clamp: needs lo <= hi, got ${lo} and ${hi}.`);
  },
  randint: checkSeed("randint"),
  rand: checkSeed("rand"),
  randn: checkSeed("randn"),
  where(tl, inputs) {
    const [cond, a, b] = inputs as [TensorHandle, TensorHandle, TensorHandle];
    if ((cond.dtype !== "i1" && cond.dtype !== a.dtype) || b.dtype !== a.dtype) {
      throw tl._error(
        "TL_INVALID_CALL",
        `tl.where: cond must be i1 (a comparison's result) or of the values' dtype, and a and b must share a dtype; got ${cond.dtype}, ${a.dtype}, ${b.dtype}. Compare to make a mask (tl.ne(cond, 0)) or cast.`,
      );
    }
  },
};

/** Triton's seeds are integers: a number seed (operand 0) must be a safe integer. */
function checkSeed(op: string) {
  return (tl: TLContext, _inputs: readonly TensorHandle[], scalars: readonly number[]) => {
    const seed = scalars[0];
    if (seed !== undefined && !Number.isSafeInteger(seed))
      throw tl._error(
        "TL_INVALID_CALL",
        `tl.${op}(seed, offsets): the seed must be an integer (Triton's seeds are), got ${seed}; Math.floor it or draw an integer.`,
      );
  };
}

/** The method of `tl` for the math op `op`: reads its arguments as the op's entry says. */
function mathCall(op: PublicMathOpName, info: MathOpInfo) {
  const takesAxis = MATH_SHAPES[info.shape].axis;
  return function (this: TLContext, ...passed: unknown[]): Promise<TensorHandle> {
    const args = op === "where" ? whereNumbers(this, passed) : passed;
    let next = 0;
    const inputs: TensorHandle[] = [];
    // A BigInt (`tl.add(x, 2n ** 60n + 3n)`: a Python int past 2^53) is an exact scalar; the
    // checks read it as its nearest double, the command and the op record carry it as is.
    const scalars: MathScalar[] = [];
    let scalarIndex: number | undefined;
    for (let i = 0; i < info.arity; i++) {
      const arg = args[next++];
      if ((typeof arg === "number" || typeof arg === "bigint") && info.scalar) {
        if (typeof arg === "number" && !Number.isFinite(arg))
          throw this._error("TL_INVALID_CALL", `tl.${op}: scalar must be finite, got ${arg}.`);
        if (scalars.length > 0)
          throw this._error(
            "TL_INVALID_CALL",
            `tl.${op}: one operand may be a number, not both; make one a tensor (tl.full).`,
          );
        scalars.push(mathScalar(arg));
        if (i !== info.arity - 1) scalarIndex = i;
      } else {
        inputs.push(arg as TensorHandle);
      }
    }
    for (const _ of info.params) scalars.push(mathScalar(args[next++] as number | bigint));
    const target = info.target ? (args[next++] as Dtype) : undefined;
    if (info.target) checkDtype(this, op, target as Dtype);
    // An omitted axis: Triton's defaults, axis 0 for softmax, cumsum and cumprod (`softmax(x,
    // dim=None)` takes dim 0, `cumsum(input, axis=0)`), every axis for the reductions (axis=None);
    // `{ out }` may stand where the axis would.
    const given =
      takesAxis && typeof args[next] !== "object" ? (args[next++] as number | undefined) : undefined;
    const axis = takesAxis ? (given ?? (info.shape === "row" ? 0 : -1)) : undefined;
    const out = (args[next] as MathOptions | undefined)?.out;
    CALL_CHECKS[op]?.(this, inputs, scalars.map(Number));
    if (given === undefined && info.shape === "reduce")
      return this._call(op, () => reduceAll(this._scope, op, inputs[0] as TensorHandle, out));
    return this._call(op, () =>
      runMath(this._scope, op, inputs, scalars, {
        ...(target !== undefined ? { target } : {}),
        ...(axis !== undefined ? { axis } : {}),
        ...(scalarIndex !== undefined ? { scalarIndex } : {}),
        out,
      }),
    );
  };
}

export const mathCalls = Object.fromEntries(
  PUBLIC_MATH_OPS.map((op) => [op, mathCall(op, MATH_OPS[op] as MathOpInfo)]),
) as unknown as MathCalls & ThisType<TLContext>;
