import { KbError } from "@kb/errors";
import type { Dtype } from "@kb/tensor";

// Tolerances: the per-dtype defaults, a check's own, and the norms they apply with (verify.ts).

/**
 * How the relative part of a tolerance scales: `"elementwise"` by each reference element,
 * `|a - b| <= atol + rtol * |b|` (numpy's `allclose`); `"relative-to-max"` by the reference's
 * largest finite magnitude, `|a - b| <= atol + rtol * max|b|` (small elements of a tensor whose
 * error is set by its large ones: a softmax, a sum with cancellation, a gradient).
 */
export const TOLERANCE_NORMS = Object.freeze(["elementwise", "relative-to-max"] as const);

/** One of {@link TOLERANCE_NORMS}. */
export type ToleranceNorm = (typeof TOLERANCE_NORMS)[number];

/**
 * How close an output element `a` must be to its reference `b`: `|a - b| <= atol + rtol * |b|`
 * (numpy's `allclose`, the reference as `b`), or `atol + rtol * max|b|` with `norm:
 * "relative-to-max"`. `{ rtol: 0, atol: 0 }` means exact.
 */
export interface Tolerance {
  /** Relative tolerance, a multiple of `|b|` (or of `max|b|`); >= 0. */
  readonly rtol: number;
  /** Absolute tolerance, in the values' own units; >= 0. */
  readonly atol: number;
  /** What `rtol` multiplies; default `"elementwise"`. */
  readonly norm?: ToleranceNorm;
}

/** The tolerance a check was compared with, and where it came from. */
export interface AppliedTolerance extends Required<Tolerance> {
  /**
   * `"dtype"`: the default of the reference's dtype ({@link TOLERANCES}, or `VerifyOptions.tolerances`);
   * `"check"`: stated for this output (`VerifyOptions.outputTolerances`, a bench check's `tolerance`),
   * the fields it leaves out taken from the dtype's.
   */
  readonly from: "dtype" | "check";
}

/**
 * The default tolerance of each dtype (ADR-0020 D11): `np.allclose` with rtol = atol = 1e-5 for
 * f32, 1e-3 for f16 and 1e-2 for bf16, one unit in the last place near 1 for the fp8 and fp4 dtypes
 * (0.125 for f8e4m3, 0.25 for f8e5m2, 0.5 for f4e2m1); `np.array_equal` (exact) for the integer
 * dtypes and `i1`.
 * rtol is about one unit in the last place of f16 (2^-10 = 9.8e-4) and bf16 (2^-7 = 7.8e-3), so
 * a result rounded the other way passes; for f32 (2^-23 = 1.2e-7) it leaves ~80 units for the
 * order of a long accumulation. atol = rtol holds elements near 0 (cancellation), which makes the
 * default loose for outputs much smaller than 1: state a tolerance for those (docs/verification.md).
 */
export const TOLERANCES: Readonly<Record<Dtype, Tolerance>> = Object.freeze({
  f32: Object.freeze({ rtol: 1e-5, atol: 1e-5 }),
  f16: Object.freeze({ rtol: 1e-3, atol: 1e-3 }),
  bf16: Object.freeze({ rtol: 1e-2, atol: 1e-2 }),
  i8: Object.freeze({ rtol: 0, atol: 0 }),
  i32: Object.freeze({ rtol: 0, atol: 0 }),
  i1: Object.freeze({ rtol: 0, atol: 0 }),
  u32: Object.freeze({ rtol: 0, atol: 0 }),
  u8: Object.freeze({ rtol: 0, atol: 0 }),
  u16: Object.freeze({ rtol: 0, atol: 0 }),
  i16: Object.freeze({ rtol: 0, atol: 0 }),
  i64: Object.freeze({ rtol: 0, atol: 0 }),
  u64: Object.freeze({ rtol: 0, atol: 0 }),
  // One unit in the last place near 1 of the fp8 and fp4 formats (3, 2 and 1 fraction bits).
  f8e4m3: Object.freeze({ rtol: 0.125, atol: 0.125 }),
  f8e5m2: Object.freeze({ rtol: 0.25, atol: 0.25 }),
  f4e2m1: Object.freeze({ rtol: 0.5, atol: 0.5 }),
});

/**
 * Why `value` is not a valid (partial) tolerance, as `rtol must be a finite number >= 0, got -1`,
 * or undefined when it is: `rtol` and `atol` finite numbers >= 0, `norm` one of
 * {@link TOLERANCE_NORMS}; a field left out is valid. `required` lists the fields that must be given.
 */
export function toleranceProblem(
  value: Partial<Tolerance>,
  required: readonly ("rtol" | "atol")[] = [],
): string | undefined {
  for (const field of ["rtol", "atol"] as const) {
    const number = value[field] as unknown;
    if (number === undefined && !required.includes(field)) continue;
    if (typeof number !== "number" || !Number.isFinite(number) || number < 0) {
      return `${field} must be a finite number >= 0, got ${typeof number === "string" ? JSON.stringify(number) : String(number)}`;
    }
  }
  const norm = value.norm as unknown;
  if (norm !== undefined && !(TOLERANCE_NORMS as readonly unknown[]).includes(norm)) {
    return `norm must be ${TOLERANCE_NORMS.map((name) => `"${name}"`).join(" or ")}, got ${typeof norm === "string" ? JSON.stringify(norm) : String(norm)}`;
  }
  return undefined;
}

/**
 * The tolerance of each dtype: {@link TOLERANCES} with `overrides` in place. Throws
 * `TENSOR_INVALID` for an override that is not a pair of finite numbers >= 0 (and a valid norm).
 */
export function dtypeTolerances(
  overrides: Partial<Record<Dtype, Tolerance>> | undefined,
): Record<Dtype, AppliedTolerance> {
  const resolved = {} as Record<Dtype, AppliedTolerance>;
  for (const dtype of Object.keys(TOLERANCES) as Dtype[]) {
    const tolerance = overrides?.[dtype] ?? TOLERANCES[dtype];
    const problem = toleranceProblem(tolerance, ["rtol", "atol"]);
    if (problem !== undefined) {
      throw new KbError("TENSOR_INVALID", `verify: the ${dtype} tolerance's ${problem}.`);
    }
    const { rtol, atol, norm = "elementwise" } = tolerance;
    resolved[dtype] = { rtol, atol, norm, from: "dtype" };
  }
  return resolved;
}

/**
 * The tolerance output `name` is compared with: `own`'s fields over its dtype's `base`, or `base`
 * when `own` is undefined. Throws `TENSOR_INVALID` naming the output for a bad field.
 */
export function outputTolerance(
  name: string,
  base: AppliedTolerance,
  own: Partial<Tolerance> | undefined,
): AppliedTolerance {
  if (own === undefined) return base;
  const problem = toleranceProblem(own);
  if (problem !== undefined) {
    throw new KbError("TENSOR_INVALID", `verify: output "${name}": tolerance ${problem}.`);
  }
  return {
    rtol: own.rtol ?? base.rtol,
    atol: own.atol ?? base.atol,
    norm: own.norm ?? base.norm,
    from: "check",
  };
}
