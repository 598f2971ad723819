// Agreement of two evaluations of the same semantics, within the tolerance of a dtype.

import { checkDtype, type Dtype } from "./dtype.js";
import { formatShape, indexOf, type RefTensor, sameShape } from "./tensor.js";

/** `|actual - expected| <= atol + rtol · |expected|`. */
export interface Tolerance {
  readonly rtol: number;
  readonly atol: number;
}

/**
 * The tolerance of each dtype (ADR-0020 D11, the numbers of `@kb/data-executor`'s `TOLERANCES`):
 * 1e-5 for f32, 1e-3 for f16, 1e-2 for bf16 (relative and absolute), exact for integers.
 */
export const TOLERANCES: Readonly<Record<Dtype, Tolerance>> = Object.freeze({
  f32: Object.freeze({ rtol: 1e-5, atol: 1e-5 }),
  f16: Object.freeze({ rtol: 1e-3, atol: 1e-3 }),
  bf16: Object.freeze({ rtol: 1e-2, atol: 1e-2 }),
  i8: Object.freeze({ rtol: 0, atol: 0 }),
  i32: Object.freeze({ rtol: 0, atol: 0 }),
  u32: Object.freeze({ rtol: 0, atol: 0 }),
  u8: Object.freeze({ rtol: 0, atol: 0 }),
  u16: Object.freeze({ rtol: 0, atol: 0 }),
  i16: Object.freeze({ rtol: 0, atol: 0 }),
  i64: Object.freeze({ rtol: 0, atol: 0 }),
  u64: Object.freeze({ rtol: 0, atol: 0 }),
  f8e4m3: Object.freeze({ rtol: 0.125, atol: 0.125 }),
  f8e5m2: Object.freeze({ rtol: 0.25, atol: 0.25 }),
  f4e2m1: Object.freeze({ rtol: 0.5, atol: 0.5 }),
});

/** The first element where two tensors disagree. */
export interface Disagreement {
  /** Row-major flat index. */
  readonly flat: number;
  /** One index per dimension. */
  readonly index: readonly number[];
  readonly actual: number;
  readonly expected: number;
}

/** What {@link sameWithin} found. */
export interface Agreement {
  readonly ok: boolean;
  /** Elements that disagree (0 when the shapes or dtypes differ: nothing was compared). */
  readonly mismatches: number;
  /** The first element (row-major) that disagrees. */
  readonly first?: Disagreement;
  /** Why nothing was compared: the shapes or dtypes differ. */
  readonly problem?: string;
}

/** True when `actual` agrees with `expected` within `tolerance` (NaN = NaN, equal infinities equal). */
export function close(actual: number, expected: number, tolerance: Tolerance): boolean {
  if (Number.isNaN(actual) || Number.isNaN(expected)) return Number.isNaN(actual) && Number.isNaN(expected);
  if (actual === expected) return true; // equal infinities; 0 and -0
  if (!Number.isFinite(actual) || !Number.isFinite(expected)) return false;
  return Math.abs(actual - expected) <= tolerance.atol + tolerance.rtol * Math.abs(expected);
}

/**
 * Whether `actual` and `expected` agree element by element within the tolerance of `dtype`
 * (default `expected.dtype`; `tolerance` overrides it). Unlike `verify` of `@kb/data-executor`, a
 * NaN agrees with a NaN and an infinity with the same infinity: both sides evaluate the same
 * semantics, so a NaN both produce is agreement. Tensors of different shapes or dtypes disagree
 * without being compared.
 */
export function sameWithin(
  actual: RefTensor,
  expected: RefTensor,
  dtype: Dtype = expected.dtype,
  tolerance: Tolerance = TOLERANCES[dtype],
): Agreement {
  checkDtype("sameWithin", dtype);
  if (!sameShape(actual.shape, expected.shape) || actual.dtype !== expected.dtype) {
    return {
      ok: false,
      mismatches: 0,
      problem: `actual is ${actual.dtype} ${formatShape(actual.shape)}, expected ${expected.dtype} ${formatShape(expected.shape)}.`,
    };
  }
  let mismatches = 0;
  let first: Disagreement | undefined;
  for (let i = 0; i < expected.data.length; i++) {
    const a = actual.data[i] as number;
    const e = expected.data[i] as number;
    if (close(a, e, tolerance)) continue;
    mismatches++;
    first ??= { flat: i, index: indexOf(expected.shape, i), actual: a, expected: e };
  }
  return first === undefined ? { ok: true, mismatches: 0 } : { ok: false, mismatches, first };
}
