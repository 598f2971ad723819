import { erf, erfcTail } from "./math-functions.js";

// The f64 functions of the libdevice subset of the math op table (Triton's tl.extra.libdevice /
// tl.math) that JavaScript's Math lacks. The others (asin, acos, atan, atan2, sinh, cosh, log1p,
// expm1, cbrt, hypot) are Math's, as the op table says.

/**
 * The inverse error function in f64: `x` with `erf(x) = y` for y in [-1, 1]; ±1 -> ±Inf, |y| > 1
 * and NaN -> NaN, ±0 -> ±0. Giles' single-precision approximation ("Approximating the erfinv
 * function", 2010) as the start, then Newton steps on `erf(x) - y`, the residual taken from
 * `erfc` past 2.5 (where `1 - |y|` is exact), so `erf(erfinv(y))` is `y` within an ulp or two.
 */
export function erfinv(y: number): number {
  if (Number.isNaN(y) || y < -1 || y > 1) return Number.NaN;
  if (y === 0) return y;
  if (Math.abs(y) === 1) return y * Number.POSITIVE_INFINITY;
  const a = Math.abs(y);
  let x = a * giles(-Math.log((1 - a) * (1 + a)));
  for (let step = 0; step < 4; step++) {
    const residual = x < 2.5 ? erf(x) - a : 1 - a - erfcTail(x);
    const next = x - residual / (TWO_OVER_SQRT_PI * Math.exp(-x * x));
    if (next === x || !Number.isFinite(next)) break;
    x = next;
  }
  return y < 0 ? -x : x;
}

const TWO_OVER_SQRT_PI = 2 / Math.sqrt(Math.PI);

/** Giles' polynomial in `w = -log((1 - a)(1 + a))`: erfinv(a) is about `a` times it. */
function giles(w: number): number {
  const [t, coefficients] = w < 5 ? [w - 2.5, CENTRAL] : [Math.sqrt(w) - 3, TAIL];
  let p = 0;
  for (const c of coefficients) p = c + p * t;
  return p;
}

const CENTRAL = [
  2.81022636e-8, 3.43273939e-7, -3.5233877e-6, -4.39150654e-6, 0.00021858087, -0.00125372503, -0.00417768164,
  0.246640727, 1.50140941,
];
const TAIL = [
  -0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613, 0.00943887047,
  1.00167406, 2.83297682,
];
