import { KbError } from "@kb/errors";
import type { Dtype } from "./dtype.js";
import { integerType, WRAPPING_OPS } from "./integer-ops.js";
import { evaluateMath } from "./math-eval.js";
import { MATH_OPS, mathOutputShape } from "./math-ops.js";

// Exact 64-bit integers in the math ops. The f64 evaluation (math-eval.ts) carries every value as
// a double, exact only while |x| <= 2^53; an op that reads or makes an `i64` / `u64` value (an
// operand, the result, or a BigInt scalar) goes through here instead: integer operands as BigInts,
// the integer ops of the table computed on them exactly (`EXACT_ELEMENTS`, `EXACT_LINES`), the
// result of a wrapping op wrapped to its integer type (Triton's, LLVM's modulo 2^bits), of a cast
// saturated (as the f64 path's rounding does on every width), or rounded once to a float dtype
// (through a double rounded to odd, so the caller's rounding to f32 / f16 / bf16 is correct). An op with no
// integer form (exp, sqrt, softmax, ...) or a float operand computes in f64 as before.
//
// Integer division as Triton's (LLVM sdiv / udiv, truncating; srem / urem, the dividend's sign):
// i64 min // -1 is i64 min (the quotient 2^63 wraps, as PTX's div.s64 returns it; LLVM calls it
// poison) and i64 min % -1 is 0; a division by zero gives all bits set and `x % 0` gives x.

/** A math op's elements in the exact evaluation: integers as BigInts, floats and booleans as f64. */
export type ExactValues = Float64Array | readonly bigint[];

/** An operand of {@link evaluateExactMath}: its elements in row-major order and its shape. */
export interface ExactOperand {
  readonly values: ExactValues;
  readonly shape: readonly number[];
}

/** A scalar of a math op: a number, or a BigInt for an integer past ±2^53 (a Python int). */
export type MathScalar = number | bigint;

/** True when an op over `dtypes` (operands and result) with `scalars` needs the exact evaluation. */
export function needsExactMath(dtypes: readonly Dtype[], scalars: readonly MathScalar[]): boolean {
  return (
    dtypes.some((dtype) => dtype === "i64" || dtype === "u64") || scalars.some((s) => typeof s === "bigint")
  );
}

/**
 * `v` as the nearest double when the caller rounds it again to a narrower float: exact while
 * |v| <= 2^53, else rounded to odd (truncated, the last bit set when bits were dropped), which
 * makes a second rounding to 24 or fewer significant bits the correct rounding of `v`.
 */
export function bigintToOddDouble(v: bigint): number {
  const negative = v < 0n;
  let m = negative ? -v : v;
  if (m <= 2n ** 53n) return Number(v);
  let shift = 0n;
  for (let t = m >> 53n; t > 0n; t >>= 1n) shift++;
  const kept = m >> shift;
  if (kept << shift !== m) m = (kept | 1n) << shift;
  return negative ? -Number(m) : Number(m);
}

type BigElement = (a: bigint, b: bigint, c: bigint, index: number, bits: number) => bigint;
const TRUE = 1n;
const FALSE = 0n;

/** Elementwise ops with an exact integer form, on BigInt operands (before the result's wrapping). */
const EXACT_ELEMENTS: Readonly<Record<string, BigElement>> = {
  add: (a, b) => a + b,
  sub: (a, b) => a - b,
  mul: (a, b) => a * b,
  fma: (a, b, c) => a * b + c,
  div: (a, b) => (b === 0n ? -1n : a / b),
  mod: (a, b) => (b === 0n ? a : a % b),
  maximum: (a, b) => (a >= b ? a : b),
  minimum: (a, b) => (a <= b ? a : b),
  clamp: (x, lo, hi) => (x < lo ? lo : x > hi ? hi : x),
  where: (cond, a, b) => (cond !== 0n ? a : b),
  lt: (a, b) => (a < b ? TRUE : FALSE),
  le: (a, b) => (a <= b ? TRUE : FALSE),
  gt: (a, b) => (a > b ? TRUE : FALSE),
  ge: (a, b) => (a >= b ? TRUE : FALSE),
  eq: (a, b) => (a === b ? TRUE : FALSE),
  ne: (a, b) => (a !== b ? TRUE : FALSE),
  and: (a, b) => a & b,
  or: (a, b) => a | b,
  xor: (a, b) => a ^ b,
  not: (a) => ~a,
  abs: (a) => (a < 0n ? -a : a),
  relu: (a) => (a > 0n ? a : 0n),
  floor: (a) => a,
  ceil: (a) => a,
  cast: (a) => a,
  copy: (a) => a,
  fill: (value) => value,
  iota: (start, _b, _c, index) => start + BigInt(index),
  // Amounts outside [0, bits) shift every bit out: 0, or the sign for an arithmetic shr (PTX's
  // clamped shifts; integer-ops.ts). BigInt's >> is arithmetic; unsigned values are never negative.
  shl: (a, n, _c, _i, bits) => (n >= 0n && n < BigInt(bits) ? a << n : 0n),
  shr: (a, n, _c, _i, bits) => (n >= 0n && n < BigInt(bits) ? a >> n : a < 0n ? -1n : 0n),
};

type BigLine = (
  x: readonly bigint[],
  base: number,
  length: number,
  stride: number,
  emit: (l: number, v: bigint) => void,
) => void;

/** Reductions and scans with an exact integer form (`emit(l, v)`: output element l of the line). */
const EXACT_LINES: Readonly<Record<string, BigLine>> = {
  sum: (x, base, length, stride, emit) => {
    let acc = 0n;
    for (let l = 0; l < length; l++) acc += x[base + l * stride] as bigint;
    emit(0, acc);
  },
  max: extreme((v, best) => v > best),
  min: extreme((v, best) => v < best),
  argmax: extreme((v, best) => v > best, true),
  argmin: extreme((v, best) => v < best, true),
  cumsum: (x, base, length, stride, emit) => {
    let acc = 0n;
    for (let l = 0; l < length; l++) {
      acc += x[base + l * stride] as bigint;
      emit(l, acc);
    }
  },
  cumprod: (x, base, length, stride, emit) => {
    let acc = 1n;
    // Wrapped at every step (congruent modulo 2^64, so the result's wrapping is unchanged) to keep
    // the BigInts small.
    for (let l = 0; l < length; l++) {
      acc = BigInt.asIntN(64, acc * (x[base + l * stride] as bigint));
      emit(l, acc);
    }
  },
};

/** The first extreme of a line (or its index): `better(v, best)` strict, so ties keep the first. */
function extreme(better: (v: bigint, best: bigint) => boolean, index = false): BigLine {
  return (x, base, length, stride, emit) => {
    let best = x[base] as bigint;
    let at = 0;
    for (let l = 1; l < length; l++) {
      const v = x[base + l * stride] as bigint;
      if (better(v, best)) {
        best = v;
        at = l;
      }
    }
    emit(0, index ? BigInt(at) : best);
  };
}

/** The operand tensor indices whose values may be booleans in f64 (`where`'s condition). */
const F64_OPERANDS: Readonly<Record<string, number>> = { where: 0 };

/**
 * The math op `op` over `operands` (integers as BigInts) with `scalars` (numbers or BigInts), as
 * the elements of `shapeOut` in `dtype`: BigInts, in the type's range, for an integer dtype;
 * f64 (rounded once by the caller) for a float dtype or `i1`. Exact when every operand is an
 * integer and the op has an integer form; otherwise `evaluateMath` on the operands as doubles.
 * Throws `OPLOG_INVALID` as `evaluateMath` does.
 */
export function evaluateExactMath(
  op: string,
  operands: readonly ExactOperand[],
  shapeOut: readonly number[],
  axis: number | null,
  {
    scalars,
    scalarIndex,
    dtype,
    operandDtype,
  }: {
    scalars: readonly MathScalar[];
    scalarIndex?: number | undefined;
    dtype: Dtype;
    /** The operands' dtype (default `dtype`): a negative scalar of an unsigned one is its two's complement. */
    operandDtype?: Dtype | undefined;
  },
): ExactValues {
  const info = MATH_OPS[op];
  if (info === undefined) throw new KbError("OPLOG_INVALID", `unknown math op "${op}".`);
  const integerScalars = scalars.every((s) => typeof s === "bigint" || Number.isInteger(s));
  const integerOperands = operands.every((o, i) => Array.isArray(o.values) || F64_OPERANDS[op] === i);
  const element = info.shape === "elementwise" ? EXACT_ELEMENTS[op] : undefined;
  const exactLine = info.shape === "reduce" || info.shape === "row" ? EXACT_LINES[op] : undefined;
  const exact =
    integerScalars &&
    integerOperands &&
    (element !== undefined || exactLine !== undefined || info.shape === "swap");
  if (!exact) {
    const doubles = operands.map((o) => ({ values: toDoubles(o.values), shape: o.shape }));
    const numbers = scalars.map(Number);
    return evaluateMath(op, doubles, shapeOut, axis, { scalars: numbers, scalarIndex, dtype });
  }
  // Where each output element reads each operand from: the op table's own broadcasting, line and
  // transpose rules, evaluated on the operands' flat indices (exact in f64).
  const size = shapeOut.reduce((p, s) => p * s, 1);
  const out = new Array<bigint>(size);
  if (info.shape === "elementwise") {
    // The f64 evaluation on zeros checks the operand count, scalars and broadcasting (and throws
    // as it would); the operands' flat indices broadcast the same way say where each reads.
    const zeros = operands.map((o) => ({ values: new Float64Array(o.values.length), shape: o.shape }));
    evaluateMath(op, zeros, shapeOut, null, { scalars: scalars.map(Number), scalarIndex });
    const readers = operands.map((o) => {
      const source = evaluateMath(
        "copy",
        [{ values: iota(o.values.length), shape: o.shape }],
        shapeOut,
        null,
        {
          scalars: [],
        },
      );
      const values = bigints(o.values);
      return (i: number) => values[source[i] as number] as bigint;
    });
    const withScalar = info.scalar && operands.length === info.arity - 1;
    // A negative number operand of an unsigned op is its two's complement (the README's rule, as
    // Triton converts a literal: -1 on u64 is 2^64 - 1), as the narrow types read it.
    const unsigned = integerType(operandDtype ?? dtype);
    const scalarOf = (value: MathScalar): bigint => {
      const v = BigInt(value);
      return unsigned !== undefined && !unsigned.signed && v < 0n ? BigInt.asUintN(unsigned.bits, v) : v;
    };
    if (withScalar) {
      const s = scalarOf(scalars[0] as MathScalar);
      readers.splice(scalarIndex ?? info.arity - 1, 0, () => s);
    }
    for (const scalar of scalars.slice(withScalar ? 1 : 0, (withScalar ? 1 : 0) + info.params.length)) {
      const s = BigInt(scalar);
      readers.push(() => s);
    }
    const bits = integerType(dtype)?.bits ?? 64;
    const [ra, rb, rc] = readers;
    for (let i = 0; i < size; i++)
      out[i] = (element as BigElement)(ra?.(i) ?? 0n, rb?.(i) ?? 0n, rc?.(i) ?? 0n, i, bits);
  } else if (info.shape === "swap") {
    const input = operands[0] as ExactOperand;
    const from = evaluateMath(
      op,
      [{ values: iota(input.values.length), shape: input.shape }],
      shapeOut,
      axis,
      {
        scalars: scalars.map(Number),
      },
    );
    const values = bigints(input.values);
    for (let i = 0; i < size; i++) out[i] = values[from[i] as number] as bigint;
  } else {
    const input = operands[0] as ExactOperand;
    const shape = input.shape;
    const a = axis === null ? shape.length - 1 : axis < 0 ? axis + shape.length : axis;
    // The f64 evaluation checks the axis and shape (and throws as it would).
    evaluateMath("sum", [{ values: new Float64Array(input.values.length), shape }], shapeOut, axis, {
      scalars: [],
    });
    const length = shape[a] as number;
    const outLength = mathOutputShape(info, shape, a)[a] as number;
    const inner = shape.slice(a + 1).reduce((p, s) => p * s, 1);
    const outer = shape.slice(0, a).reduce((p, s) => p * s, 1);
    const values = bigints(input.values);
    for (let o = 0; o < outer; o++)
      for (let i = 0; i < inner; i++) {
        const outBase = o * outLength * inner + i;
        (exactLine as BigLine)(values, o * length * inner + i, length, inner, (l, v) => {
          out[outBase + l * inner] = v;
        });
      }
  }
  return finish(op, out, dtype);
}

/**
 * Exact results of `op` in `dtype`: on an integer type wrapped (the ops of `WRAPPING_OPS`) or
 * saturated (`cast` and the rest, the f64 path's `round_d`); 0/1 for `i1`; f64 rounded to odd
 * for a float.
 */
function finish(op: string, out: bigint[], dtype: Dtype): ExactValues {
  const type = integerType(dtype);
  if (type !== undefined) {
    const min = type.signed ? -(2n ** BigInt(type.bits - 1)) : 0n;
    const max = type.signed ? 2n ** BigInt(type.bits - 1) - 1n : 2n ** BigInt(type.bits) - 1n;
    const wrap = type.signed ? BigInt.asIntN : BigInt.asUintN;
    const wraps = WRAPPING_OPS.has(op);
    for (let i = 0; i < out.length; i++) {
      const v = out[i] as bigint;
      out[i] = wraps ? wrap(type.bits, v) : v < min ? min : v > max ? max : v;
    }
    return out;
  }
  const doubles = new Float64Array(out.length);
  if (dtype === "i1") for (let i = 0; i < out.length; i++) doubles[i] = out[i] === 0n ? 0 : 1;
  else for (let i = 0; i < out.length; i++) doubles[i] = bigintToOddDouble(out[i] as bigint);
  return doubles;
}

/** 0, 1, ..., n - 1 as doubles. */
function iota(n: number): Float64Array {
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) out[i] = i;
  return out;
}

/** Values as BigInts (f64 integers, such as an `i1` condition, truncated). */
function bigints(values: ExactValues): readonly bigint[] {
  if (Array.isArray(values)) return values as readonly bigint[];
  return Array.from(values as Float64Array, (v) => (Number.isFinite(v) ? BigInt(Math.trunc(v)) : 0n));
}

/** Values as doubles (BigInts rounded to the nearest). */
function toDoubles(values: ExactValues): Float64Array {
  return Array.isArray(values)
    ? Float64Array.from(values as readonly bigint[], Number)
    : (values as Float64Array);
}

/**
 * `value` as a math op's scalar: a number when it is one or a BigInt within ±2^53 (so a record
 * spells it as JSON does), the BigInt itself past that (exact; see the op log's `scalars`).
 */
export function mathScalar(value: number | bigint): MathScalar {
  if (typeof value === "number") return value;
  return value >= -(2n ** 53n) && value <= 2n ** 53n ? Number(value) : value;
}
