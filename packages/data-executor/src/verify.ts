import { KbError } from "@kb/errors";
import {
  bf16BitsToF32,
  type Dtype,
  decodeNarrowFloat,
  type Elements,
  elementView,
  f16BitsToF32,
  formatShape,
  isNarrowFloatDtype,
  Tensor,
} from "@kb/tensor";
import type { NonFiniteOrigin } from "./executor.js";
import { type AppliedTolerance, dtypeTolerances, outputTolerance, type Tolerance } from "./tolerance.js";

/** One element of an output that is not close to its reference. */
export interface Mismatch {
  /** Row-major flat index of the element. */
  readonly flat: number;
  /** The element's index, one entry per dimension. */
  readonly index: readonly number[];
  /** The output's value. */
  readonly actual: number;
  /** The reference's value. */
  readonly expected: number;
}

/** One element of a tensor that is NaN, +Infinity or -Infinity. */
export interface NonFiniteElement {
  /** Row-major flat index of the element. */
  readonly flat: number;
  /** The element's index, one entry per dimension. */
  readonly index: readonly number[];
  /** Its value: NaN, Infinity or -Infinity. */
  readonly value: number;
}

/** How many elements of a tensor are not finite, by kind, and the first of them. */
export interface NonFiniteCounts {
  /** NaN elements. */
  readonly nan: number;
  /** +Infinity elements. */
  readonly posInf: number;
  /** -Infinity elements. */
  readonly negInf: number;
  /** The first non-finite element in row-major order, or null when every element is finite. */
  readonly first: NonFiniteElement | null;
}

/**
 * The comparison of one output with its reference.
 *
 * `dtype` and `shape` are the reference's. When the output is missing or its shape or dtype
 * differ, nothing is compared: `pass` is false, `problem` says why, the error maxima are NaN,
 * `mismatches` is 0, `firstMismatch` null and both non-finite counts are 0 (nothing was read).
 */
export interface OutputCheck {
  /** The output's name (its key in the references). */
  readonly name: string;
  /** The reference's dtype. */
  readonly dtype: Dtype;
  /** The reference's shape. */
  readonly shape: readonly number[];
  /** The tolerance applied: rtol, atol, norm, and whether the dtype's default or the check's own. */
  readonly tolerance: AppliedTolerance;
  /**
   * The reference's largest finite `|b|` (what `rtol` multiplies with `norm: "relative-to-max"`);
   * 0 when it has no finite element, NaN when nothing was compared (a `problem`).
   */
  readonly referenceMaxAbs: number;
  /**
   * The largest `|a - b|` over the elements without a NaN (equal values, equal infinities too,
   * count as 0); Infinity when an infinity meets a finite value or the opposite infinity.
   * Elements with a NaN in the output or the reference have no error: they are left out and
   * counted in {@link actualNonFinite} and {@link referenceNonFinite}. NaN when every element has a
   * NaN (no error could be measured, so none is reported as 0); 0 for an empty tensor.
   */
  readonly maxAbsError: number;
  /**
   * The largest `|a - b| / |b|` over elements without a NaN and with `b != 0` (0 where `a == b`);
   * NaN when every element has a NaN, like {@link maxAbsError}; otherwise 0 when none is left.
   */
  readonly maxRelError: number;
  /** How many elements are not close. */
  readonly mismatches: number;
  /** The first element (row-major) that is not close, or null. */
  readonly firstMismatch: Mismatch | null;
  /**
   * The NaN, +Inf and -Inf elements of the output and the first of them. A NaN never matches;
   * an infinity matches only the same infinity in the reference.
   */
  readonly actualNonFinite: NonFiniteCounts;
  /**
   * The same for the reference. A NaN there is suspicious (no output can match it: the
   * reference's code is likely wrong); {@link formatVerifyTable} says so.
   */
  readonly referenceNonFinite: NonFiniteCounts;
  /** True when every element is close and there is no `problem`. */
  readonly pass: boolean;
  /**
   * Why the output could not be compared: `"missing"` when `outputs` has no tensor of this name,
   * otherwise a sentence naming the shapes or dtypes that differ. Absent when it was compared.
   */
  readonly problem?: string;
}

/** The result of {@link verify}: one check per reference. */
export interface VerifyReport {
  /** True when every output check passes (also when there are no references). */
  readonly pass: boolean;
  /** One check per reference, sorted by name. */
  readonly outputs: readonly OutputCheck[];
  /**
   * Where the first non-finite value of the replay came from, when the caller knows
   * ({@link verify} never sets it; `verifyOutcome` of `@kb/runtime` copies the replay's
   * `DataExecutor.firstNonFinite`): the first math or GEMM op whose output held a NaN or an
   * infinity, or null when none did, so a non-finite output was copied from the host's data.
   * Absent when unknown.
   */
  readonly firstNonFinite?: NonFiniteOrigin | null;
}

/** Options of {@link verify}. */
export interface VerifyOptions {
  /** Tolerances that replace the {@link TOLERANCES} of their dtypes. Default: none. */
  readonly tolerances?: Partial<Record<Dtype, Tolerance>>;
  /**
   * Tolerances of single outputs, by name: the fields given replace those of the output's dtype
   * tolerance (`{ rtol: 1e-2 }` keeps the dtype's atol). Default: none.
   */
  readonly outputTolerances?: Readonly<Record<string, Partial<Tolerance>>>;
}

/**
 * Compares the final outputs of a run with their references (ADR-0020 D11, default mode).
 *
 * An element `a` of an output is close to its reference element `b` when
 * `|a - b| <= atol + rtol * |b|` with the tolerance of the reference's dtype ({@link TOLERANCES},
 * or `options.tolerances`) or the output's own (`options.outputTolerances`, whose `norm:
 * "relative-to-max"` puts the reference's largest finite `|b|` in place of `|b|`), as numpy's `allclose` with `equal_nan=False` decides: a NaN never
 * matches (not even a NaN), an infinity matches only the same infinity, and a finite output never
 * matches an infinite reference whatever the tolerance. Integer dtypes are exact by default.
 *
 * Each reference name gives one {@link OutputCheck}, in name order (code-unit order), so reports
 * are deterministic whatever order the records were built in. An output that `outputs` lacks
 * fails with `problem: "missing"`; one whose shape or dtype differs from its reference fails
 * with the reason and is not compared. Outputs that have no reference are ignored: the
 * references say what is checked.
 *
 * Each check also counts the NaN, +Inf and -Inf elements of the output and, separately, of the
 * reference, with the first of each ({@link OutputCheck.actualNonFinite}): an all-NaN output
 * shows as 32 NaN of 32, never as an error of 0.
 *
 * **When to use**: to check the tensors a phase-2 replay read back against host references
 * computed independently of the executor. {@link formatVerifyTable} prints the report.
 *
 * **Gotchas**: `0` and `-0` are equal. No references means nothing to check: the report passes
 * with no outputs. Values are decoded exactly, in chunks, into reused scratch arrays (no
 * allocation per element, constant extra memory): about 100 ms for 16M elements.
 *
 * Throws `TENSOR_INVALID` when a value of `outputs` or `references` is not a {@link Tensor}, or a
 * tolerance is not a pair of finite numbers >= 0 (or names an unknown norm), naming the output.
 */
export function verify(
  outputs: Readonly<Record<string, Tensor>>,
  references: Readonly<Record<string, Tensor>>,
  options: VerifyOptions = {},
): VerifyReport {
  const tolerances = dtypeTolerances(options.tolerances);
  const own = options.outputTolerances ?? {};
  const names = Object.keys(references).sort();
  const checks: OutputCheck[] = [];
  for (const name of names) {
    const reference = references[name];
    if (!(reference instanceof Tensor)) {
      throw new KbError(
        "TENSOR_INVALID",
        `verify: reference "${name}" must be a Tensor, got ${describeValue(reference)}.`,
      );
    }
    const output = Object.hasOwn(outputs, name) ? outputs[name] : undefined;
    if (output !== undefined && !(output instanceof Tensor)) {
      throw new KbError(
        "TENSOR_INVALID",
        `verify: output "${name}" must be a Tensor, got ${describeValue(output)}.`,
      );
    }
    const tolerance = outputTolerance(
      name,
      tolerances[reference.dtype],
      Object.hasOwn(own, name) ? own[name] : undefined,
    );
    checks.push(checkOutput(name, output, reference, tolerance));
  }
  return { pass: checks.every((check) => check.pass), outputs: checks };
}

// ---------------------------------------------------------------------------------------------
// Comparing

/** Elements decoded per chunk: both scratch arrays stay in cache, and none grows with the tensor. */
const CHUNK = 4096;
const actualChunk = new Float64Array(CHUNK);
const expectedChunk = new Float64Array(CHUNK);

function checkOutput(
  name: string,
  output: Tensor | undefined,
  reference: Tensor,
  tolerance: AppliedTolerance,
): OutputCheck {
  const base = { name, dtype: reference.dtype, shape: reference.shape, tolerance };
  const problem = output === undefined ? "missing" : layoutProblem(output, reference);
  if (problem !== undefined || output === undefined) {
    return {
      ...base,
      referenceMaxAbs: Number.NaN,
      maxAbsError: Number.NaN,
      maxRelError: Number.NaN,
      mismatches: 0,
      firstMismatch: null,
      actualNonFinite: NO_NON_FINITE,
      referenceNonFinite: NO_NON_FINITE,
      pass: false,
      problem: problem ?? "missing",
    };
  }

  const { rtol, atol } = tolerance;
  const actualView = elementView(output);
  const expectedView = elementView(reference);
  const size = reference.size;
  const exactWide = (reference.dtype === "i64" || reference.dtype === "u64") && rtol === 0 && atol === 0;
  // With relative-to-max, rtol multiplies max|b| for every element (a pass over the reference
  // first); elementwise, each |b|, and max|b| is found on the way.
  const perElement = tolerance.norm === "elementwise";
  let referenceMaxAbs = perElement ? 0 : maxFiniteMagnitude(reference.dtype, expectedView, size);
  const maxBound = atol + rtol * referenceMaxAbs;
  let maxAbs = 0;
  let maxRel = 0;
  let unmeasured = 0;
  let mismatches = 0;
  let firstFlat = -1;
  // Non-finite counts of the output (a) and the reference (b): NaN, +Inf, -Inf, first flat index.
  let aNan = 0;
  let aPosInf = 0;
  let aNegInf = 0;
  let aFirst = -1;
  let bNan = 0;
  let bPosInf = 0;
  let bNegInf = 0;
  let bFirst = -1;
  for (let start = 0; start < size; start += CHUNK) {
    const count = Math.min(CHUNK, size - start);
    decodeChunk(output.dtype, actualView, start, count, actualChunk);
    decodeChunk(reference.dtype, expectedView, start, count, expectedChunk);
    for (let i = 0; i < count; i++) {
      const a = actualChunk[i]!;
      const b = expectedChunk[i]!;
      // x - x is 0 for every finite x, NaN for NaN and the infinities: one test on the common path.
      if (a - a !== 0) {
        if (Number.isNaN(a)) aNan++;
        else if (a > 0) aPosInf++;
        else aNegInf++;
        if (aFirst < 0) aFirst = start + i;
      }
      if (b - b !== 0) {
        if (Number.isNaN(b)) bNan++;
        else if (b > 0) bPosInf++;
        else bNegInf++;
        if (bFirst < 0) bFirst = start + i;
      }
      // Equal values (equal infinities too) have error 0; a NaN has none (NaN), counted apart.
      // 64-bit integers compared exactly read as equal doubles but differ in their stored bits.
      const same = a === b && (!exactWide || actualView[start + i] === expectedView[start + i]);
      const error = a === b ? 0 : Math.abs(a - b);
      const magnitude = Math.abs(b);
      if (perElement && magnitude > referenceMaxAbs && magnitude !== Number.POSITIVE_INFINITY) {
        referenceMaxAbs = magnitude;
      }
      if (Number.isNaN(error)) unmeasured++;
      // NaN errors fail every `>`, so they never enter the maxima.
      else if (error > maxAbs) maxAbs = error;
      if (magnitude !== 0 && error / magnitude > maxRel) maxRel = error / magnitude;
      // numpy's isclose, equal_nan=False: equal values (equal infinities too) are close; otherwise
      // the error must be within tolerance of a finite reference. A NaN fails both.
      const bound = perElement ? atol + rtol * magnitude : maxBound;
      if (same || (!exactWide && error <= bound && magnitude !== Number.POSITIVE_INFINITY)) continue;
      if (mismatches === 0) firstFlat = start + i;
      mismatches++;
    }
  }
  // Every element had a NaN: there is no error to report, and 0 would read as a perfect match.
  const nothingMeasured = size > 0 && unmeasured === size;
  return {
    ...base,
    referenceMaxAbs,
    maxAbsError: nothingMeasured ? Number.NaN : maxAbs,
    maxRelError: nothingMeasured ? Number.NaN : maxRel,
    mismatches,
    firstMismatch:
      firstFlat < 0
        ? null
        : {
            flat: firstFlat,
            index: unflatten(firstFlat, reference.shape),
            actual: output.getFlat(firstFlat),
            expected: reference.getFlat(firstFlat),
          },
    actualNonFinite: nonFiniteCounts(output, aNan, aPosInf, aNegInf, aFirst),
    referenceNonFinite: nonFiniteCounts(reference, bNan, bPosInf, bNegInf, bFirst),
    pass: mismatches === 0,
  };
}

/** The counts of a tensor without non-finite elements. */
const NO_NON_FINITE: NonFiniteCounts = Object.freeze({ nan: 0, posInf: 0, negInf: 0, first: null });

function nonFiniteCounts(
  tensor: Tensor,
  nan: number,
  posInf: number,
  negInf: number,
  first: number,
): NonFiniteCounts {
  if (first < 0) return NO_NON_FINITE;
  return {
    nan,
    posInf,
    negInf,
    first: { flat: first, index: unflatten(first, tensor.shape), value: tensor.getFlat(first) },
  };
}

/** What makes `output` incomparable with `reference` (shape, dtype or both), or undefined. */
function layoutProblem(output: Tensor, reference: Tensor): string | undefined {
  const problems: string[] = [];
  if (!sameShape(output.shape, reference.shape)) {
    problems.push(
      `shape ${formatShape(output.shape)} differs from the reference's ${formatShape(reference.shape)}`,
    );
  }
  if (output.dtype !== reference.dtype) {
    problems.push(`dtype ${output.dtype} differs from the reference's ${reference.dtype}`);
  }
  return problems.length === 0 ? undefined : problems.join("; ");
}

/** A tensor's elements as stored: binary32 values, integers, or 16-bit float patterns. */
type ElementView = Elements;

/** The largest finite `|b|` of the first `size` elements of `view` (0 when none is finite). */
function maxFiniteMagnitude(dtype: Dtype, view: ElementView, size: number): number {
  let max = 0;
  for (let start = 0; start < size; start += CHUNK) {
    const count = Math.min(CHUNK, size - start);
    decodeChunk(dtype, view, start, count, expectedChunk);
    for (let i = 0; i < count; i++) {
      const magnitude = Math.abs(expectedChunk[i]!);
      // NaN fails the `>`; an infinity is no scale.
      if (magnitude > max && magnitude !== Number.POSITIVE_INFINITY) max = magnitude;
    }
  }
  return max;
}

/** Decodes elements [start, start + count) of `view` into `out[0 .. count)`, exactly. */
function decodeChunk(dtype: Dtype, view: ElementView, start: number, count: number, out: Float64Array): void {
  if (dtype === "f16" || dtype === "bf16") {
    const table = dtype === "f16" ? f16Values() : bf16Values();
    for (let i = 0; i < count; i++) out[i] = table[view[start + i] as number]!;
    return;
  }
  if (isNarrowFloatDtype(dtype)) {
    for (let i = 0; i < count; i++) out[i] = decodeNarrowFloat(view[start + i] as number, dtype);
    return;
  }
  for (let i = 0; i < count; i++) out[i] = Number(view[start + i]!);
}

let f16Table: Float64Array | undefined;
let bf16Table: Float64Array | undefined;

/** Entry `bits` is the value of the binary16 pattern `bits`; built on first use. */
function f16Values(): Float64Array {
  if (f16Table === undefined) f16Table = valueTable(f16BitsToF32);
  return f16Table;
}

/** Entry `bits` is the value of the bfloat16 pattern `bits`; built on first use. */
function bf16Values(): Float64Array {
  if (bf16Table === undefined) bf16Table = valueTable(bf16BitsToF32);
  return bf16Table;
}

function valueTable(decode: (bits: number) => number): Float64Array {
  const table = new Float64Array(65536);
  for (let bits = 0; bits < 65536; bits++) table[bits] = decode(bits);
  return table;
}

// ---------------------------------------------------------------------------------------------
// Helpers

function sameShape(a: readonly number[], b: readonly number[]): boolean {
  if (a.length !== b.length) return false;
  for (let axis = 0; axis < a.length; axis++) if (a[axis] !== b[axis]) return false;
  return true;
}

/** The row-major index of flat element `flat` of a tensor of `shape`. */
function unflatten(flat: number, shape: readonly number[]): number[] {
  const index = new Array<number>(shape.length);
  for (let axis = shape.length - 1; axis >= 0; axis--) {
    const dim = shape[axis]!;
    index[axis] = flat % dim;
    flat = Math.floor(flat / dim);
  }
  return index;
}

/** The number of elements of a shape. */
export function elementCount(shape: readonly number[]): number {
  let size = 1;
  for (const dim of shape) size *= dim;
  return size;
}

function describeValue(value: unknown): string {
  return value === null || typeof value !== "object" ? String(value) : Object.prototype.toString.call(value);
}
