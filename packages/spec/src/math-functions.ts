// The f64 functions of the math op table (math-ops.ts) that JavaScript's Math lacks, and the line
// functions of its reductions, scans and softmax. Phase 1 (known values) and phase 2 (the data
// executor) both evaluate through them, so a value computed twice is the same double.

/**
 * The error function in f64: the Maclaurin series below |x| = 2.5, 1 - erfc from its continued
 * fraction up to 6, ±1 beyond (erfc(6) < 2.2e-17, under half an ulp of 1). Absolute error below
 * 1e-13 (the series loses about 3 digits to cancellation at 2.5), far below an f32 ulp; odd
 * (erf(-0) is -0); NaN gives NaN.
 */
export function erf(x: number): number {
  if (Number.isNaN(x)) return x;
  const ax = Math.abs(x);
  let r: number;
  if (ax < 2.5) {
    // 2/sqrt(pi) * sum_n (-1)^n x^(2n+1) / (n! (2n+1)); `term` is (-1)^n x^(2n+1) / n!.
    const x2 = ax * ax;
    let term = ax;
    let sum = ax;
    for (let n = 1; n < 100; n++) {
      term *= -x2 / n;
      const next = term / (2 * n + 1);
      sum += next;
      if (Math.abs(next) <= 1e-17 * sum) break;
    }
    r = sum * TWO_OVER_SQRT_PI;
  } else if (ax < 6) {
    r = 1 - erfcTail(ax);
  } else {
    r = 1;
  }
  return x < 0 || Object.is(x, -0) ? -r : r;
}

/**
 * erfc(x) for x >= 2.5 from its continued fraction, relative error near 1e-16:
 * `e^(-x^2) / sqrt(pi) / (x + (1/2) / (x + 1 / (x + (3/2) / (x + 2 / (x + ...)))))`, evaluated
 * from the bottom.
 */
export function erfcTail(x: number): number {
  let f = x;
  for (let k = ERFC_TERMS; k >= 1; k--) f = x + k / 2 / f;
  return Math.exp(-x * x) / (Math.sqrt(Math.PI) * f);
}

const TWO_OVER_SQRT_PI = 2 / Math.sqrt(Math.PI);
/** Terms of erfc's continued fraction: enough for 1e-16 from x = 2.5 on. */
const ERFC_TERMS = 120;

/**
 * `a ** b` as C's `pow` (Triton's libdevice) defines it where JavaScript differs: `pow(1, y)` is 1
 * for every y and `pow(-1, ±Infinity)` is 1 (JavaScript gives NaN for both).
 */
export function pow(a: number, b: number): number {
  if (a === 1 || (a === -1 && !Number.isFinite(b) && !Number.isNaN(b))) return 1;
  return a ** b;
}

/** GELU in its exact form (PyTorch's default, `approximate="none"`): `x / 2 * (1 + erf(x / sqrt 2))`. */
export function gelu(x: number): number {
  return 0.5 * x * (1 + erf(x / Math.SQRT2));
}

/** SiLU (swish): `x * sigmoid(x) = x / (1 + e^-x)`. */
export function silu(x: number): number {
  return x / (1 + Math.exp(-x));
}

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

/** softmax of one line in f64: max, exp of the differences, their sum, division. */
export const softmaxLine: LineFn = (x, xBase, out, outBase, length, stride) => {
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

/** The inclusive prefix sums of one line, accumulated in f64 in index order. */
export const cumsumLine: LineFn = (x, xBase, out, outBase, length, stride) => {
  let sum = 0;
  for (let l = 0; l < length; l++) {
    sum += x[xBase + l * stride] as number;
    out[outBase + l * stride] = sum;
  }
};

/** The inclusive prefix products of one line, multiplied in f64 in index order. */
export const cumprodLine: LineFn = (x, xBase, out, outBase, length, stride) => {
  let product = 1;
  for (let l = 0; l < length; l++) {
    product *= x[xBase + l * stride] as number;
    out[outBase + l * stride] = product;
  }
};

/**
 * The index of a line's extreme value (`better(a, b)`: a replaces the best so far b): the first
 * index on ties; the first NaN wins over every number (numpy's and PyTorch's rule).
 */
export function argLine(better: (value: number, best: number) => boolean): LineFn {
  return (x, xBase, out, outBase, length, stride) => {
    let index = 0;
    let best = x[xBase] as number;
    for (let l = 1; l < length && !Number.isNaN(best); l++) {
      const value = x[xBase + l * stride] as number;
      if (Number.isNaN(value) || better(value, best)) {
        best = value;
        index = l;
      }
    }
    out[outBase] = index;
  };
}
