/**
 * The error function in f64: the Maclaurin series below |x| = 2.5, 1 - erfc from its continued
 * fraction up to 6, ±1 beyond (erfc(6) < 2.2e-17, under half an ulp of 1). Absolute error below
 * 1e-13 (the series loses about 3 digits to cancellation at 2.5), far below an f32 ulp; odd
 * (erf(-0) is -0); NaN gives NaN.
 */
export declare function erf(x: number): number;
/**
 * erfc(x) for x >= 2.5 from its continued fraction, relative error near 1e-16:
 * `e^(-x^2) / sqrt(pi) / (x + (1/2) / (x + 1 / (x + (3/2) / (x + 2 / (x + ...)))))`, evaluated
 * from the bottom.
 */
export declare function erfcTail(x: number): number;
/**
 * `a ** b` as C's `pow` (Triton's libdevice) defines it where JavaScript differs: `pow(1, y)` is 1
 * for every y and `pow(-1, ±Infinity)` is 1 (JavaScript gives NaN for both).
 */
export declare function pow(a: number, b: number): number;
/** GELU in its exact form (PyTorch's default, `approximate="none"`): `x / 2 * (1 + erf(x / sqrt 2))`. */
export declare function gelu(x: number): number;
/** SiLU (swish): `x * sigmoid(x) = x / (1 + e^-x)`. */
export declare function silu(x: number): number;
/**
 * A reduce or row op on one line of `length` f64 values along its axis: reads
 * `x[xBase + l * stride]` for l in [0, length) and writes `out[outBase + l * stride]` (a reduction
 * writes `out[outBase]` only). Phase 2 rounds each written value once to the output dtype.
 */
export type LineFn = (x: Float64Array, xBase: number, out: Float64Array, outBase: number, length: number, stride: number) => void;
/** softmax of one line in f64: max, exp of the differences, their sum, division. */
export declare const softmaxLine: LineFn;
/** The inclusive prefix sums of one line, accumulated in f64 in index order. */
export declare const cumsumLine: LineFn;
/**
 * The index of a line's extreme value (`better(a, b)`: a replaces the best so far b): the first
 * index on ties; the first NaN wins over every number (numpy's and PyTorch's rule).
 */
export declare function argLine(better: (value: number, best: number) => boolean): LineFn;
