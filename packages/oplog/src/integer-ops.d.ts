import type { ElementFn } from "./math-ops.js";
import type { Dtype } from "./schema.js";
/** Width and signedness of an integer dtype. */
export interface IntegerType {
    readonly bits: number;
    readonly signed: boolean;
}
/** The integer type of `dtype`, or undefined for the floats and `i1` (booleans are not wrapped). */
export declare function integerType(dtype: Dtype | undefined): IntegerType | undefined;
/**
 * The integer `x` modulo 2^bits, in the type's range: [-2^(bits-1), 2^(bits-1)) signed, [0, 2^bits)
 * unsigned. `x` is first truncated toward zero (NaN and ±Inf give 0); it must be exact in f64
 * (|x| <= 2^53), as every integer op's result before wrapping is.
 */
export declare function wrapInteger(x: number, type: IntegerType): number;
/**
 * The ops whose result on an integer dtype wraps (a reduction or scan wraps its f64 total). Every
 * other op rounds its f64 result to the dtype with saturation (`cast`, `maximum`, `exp`, ...).
 */
export declare const WRAPPING_OPS: ReadonlySet<string>;
/** The element function of `op` on integer operands of `type` (before wrapping). */
export declare function integerElement(op: string, type: IntegerType, element: ElementFn): ElementFn;
