import type { Dtype } from "./schema.js";
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
export declare function broadcastShapes(shapes: readonly (readonly number[])[]): number[] | null;
/**
 * The op `op` over `operands` in f64, as a new array of `shapeOut`'s elements (row-major):
 * elementwise ops broadcast their operands to `shapeOut`; reduce and row ops go along `axis`
 * (negative counts from the end; null: the last); a swap exchanges `axis` and `params[0]`.
 * Throws `OPLOG_INVALID` for an unknown op, the wrong number of operands or scalars, or shapes
 * that do not broadcast to `shapeOut`.
 */
export declare function evaluateMath(op: string, operands: readonly MathOperand[], shapeOut: readonly number[], axis: number | null, { scalars, scalarIndex, dtype }: MathScalars): Float64Array;
