/**
 * The inverse error function in f64: `x` with `erf(x) = y` for y in [-1, 1]; ±1 -> ±Inf, |y| > 1
 * and NaN -> NaN, ±0 -> ±0. Giles' single-precision approximation ("Approximating the erfinv
 * function", 2010) as the start, then Newton steps on `erf(x) - y`, the residual taken from
 * `erfc` past 2.5 (where `1 - |y|` is exact), so `erf(erfinv(y))` is `y` within an ulp or two.
 */
export declare function erfinv(y: number): number;
