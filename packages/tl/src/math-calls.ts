import {
  MATH_OPS,
  MATH_SHAPES,
  type MathOpInfo,
  PUBLIC_MATH_OPS,
  type PublicMathOpName,
} from "@kb/components";
import type { Dtype } from "@kb/tensor";
import { runMath } from "./compute.js";
import type { TLContext } from "./context.js";
import type { TensorHandle } from "./handles.js";
import type { MathOptions } from "./options.js";
import { checkDtype } from "./validate.js";

// The math calls of `tl` (blocking, one PE_MATH command each), made from the op table
// (`MATH_OPS` of @kb/oplog): a method per public op, whose arguments follow the op's entry in
// order: its tensor operands (the last one may be a number where the op takes a scalar), its
// `params` (clamp's lo, hi), its target dtype (cast), its axis (reduce and row ops, default -1),
// then `{ out }`. A new op needs its table entry and its typing line below.

/** The math calls of `tl` (installed on `TLContext` by context.ts), in the op table's order. */
export interface MathCalls {
  /** `a + b` elementwise; `b` a tensor of `a`'s shape and dtype, or a finite number. */
  add(a: TensorHandle, b: TensorHandle | number, options?: MathOptions): Promise<TensorHandle>;
  /** `a - b` elementwise; `b` a tensor or a finite number. */
  sub(a: TensorHandle, b: TensorHandle | number, options?: MathOptions): Promise<TensorHandle>;
  /** `a * b` elementwise; `b` a tensor or a finite number. */
  mul(a: TensorHandle, b: TensorHandle | number, options?: MathOptions): Promise<TensorHandle>;
  /** `a / b` elementwise; `b` a tensor or a finite number. */
  div(a: TensorHandle, b: TensorHandle | number, options?: MathOptions): Promise<TensorHandle>;
  /** The larger of `a` and `b` (a NaN on either side gives NaN; `a` on a tie). */
  maximum(a: TensorHandle, b: TensorHandle | number, options?: MathOptions): Promise<TensorHandle>;
  /** The smaller of `a` and `b` (a NaN on either side gives NaN; `a` on a tie). */
  minimum(a: TensorHandle, b: TensorHandle | number, options?: MathOptions): Promise<TensorHandle>;
  /** `a * b + c`. */
  fma(a: TensorHandle, b: TensorHandle, c: TensorHandle, options?: MathOptions): Promise<TensorHandle>;
  /** `cond ? a : b` elementwise (cond nonzero; NaN counts as true); all three share a dtype. */
  where(cond: TensorHandle, a: TensorHandle, b: TensorHandle, options?: MathOptions): Promise<TensorHandle>;
  /** `x` clamped to `[lo, hi]` (`lo <= hi`). */
  clamp(x: TensorHandle, lo: number, hi: number, options?: MathOptions): Promise<TensorHandle>;
  /** `e^x` elementwise. */
  exp(x: TensorHandle, options?: MathOptions): Promise<TensorHandle>;
  /** The natural logarithm elementwise. */
  log(x: TensorHandle, options?: MathOptions): Promise<TensorHandle>;
  /** The square root elementwise. */
  sqrt(x: TensorHandle, options?: MathOptions): Promise<TensorHandle>;
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
  /** `x` converted to `dtype` (Triton's `x.to(dtype)`), rounding to nearest even. */
  cast(x: TensorHandle, dtype: Dtype, options?: MathOptions): Promise<TensorHandle>;
  /** Sum along `axis` (default the last; that dimension becomes 1). */
  sum(x: TensorHandle, axis?: number, options?: MathOptions): Promise<TensorHandle>;
  /** Maximum along `axis` (default the last; that dimension becomes 1). */
  max(x: TensorHandle, axis?: number, options?: MathOptions): Promise<TensorHandle>;
  /** Minimum along `axis` (default the last; that dimension becomes 1). */
  min(x: TensorHandle, axis?: number, options?: MathOptions): Promise<TensorHandle>;
  /** Softmax along `axis` (default the last) as one PE_MATH op (phase 2: max, sub, exp, sum, div). */
  softmax(x: TensorHandle, axis?: number, options?: MathOptions): Promise<TensorHandle>;
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
  where(tl, inputs) {
    const [cond, a, b] = inputs as [TensorHandle, TensorHandle, TensorHandle];
    if (cond.dtype !== a.dtype || b.dtype !== a.dtype) {
      // One math command carries one input dtype: phase 2 would read cond with a's dtype.
      throw tl._error(
        "TL_INVALID_CALL",
        `tl.where: cond, a and b must share a dtype, got ${cond.dtype}, ${a.dtype}, ${b.dtype}; cast cond first (tl.cast(cond, "${a.dtype}")).`,
      );
    }
  },
};

/** The method of `tl` for the math op `op`: reads its arguments as the op's entry says. */
function mathCall(op: PublicMathOpName, info: MathOpInfo) {
  const takesAxis = MATH_SHAPES[info.shape].axis;
  return function (this: TLContext, ...args: unknown[]): Promise<TensorHandle> {
    let next = 0;
    const inputs: TensorHandle[] = [];
    const scalars: number[] = [];
    for (let i = 0; i < info.arity; i++) {
      const arg = args[next++];
      if (typeof arg === "number" && info.scalar && i === info.arity - 1) {
        if (!Number.isFinite(arg))
          throw this._error("TL_INVALID_CALL", `tl.${op}: scalar must be finite, got ${arg}.`);
        scalars.push(arg);
      } else {
        inputs.push(arg as TensorHandle);
      }
    }
    for (const _ of info.params) scalars.push(args[next++] as number);
    const target = info.target ? (args[next++] as Dtype) : undefined;
    if (info.target) checkDtype(this, op, target as Dtype);
    const axis = takesAxis ? ((args[next++] as number | undefined) ?? -1) : undefined;
    const out = (args[next] as MathOptions | undefined)?.out;
    CALL_CHECKS[op]?.(this, inputs, scalars);
    return this._call(op, () =>
      runMath(this._scope, op, inputs, scalars, {
        ...(target !== undefined ? { target } : {}),
        ...(axis !== undefined ? { axis } : {}),
        out,
      }),
    );
  };
}

export const mathCalls = Object.fromEntries(
  PUBLIC_MATH_OPS.map((op) => [op, mathCall(op, MATH_OPS[op] as MathOpInfo)]),
) as unknown as MathCalls & ThisType<TLContext>;
