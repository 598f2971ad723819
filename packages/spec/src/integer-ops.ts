import type { Dtype } from "./dtype.js";
import type { ElementFn, LineFn } from "./math-ops.js";

// Integer arithmetic as Triton's (LLVM's) on the integer dtypes: results wrap modulo 2^bits
// (two's complement for the signed types), `div` truncates toward zero and `mod` takes the sign
// of the dividend (Triton's `//` and `%`: sdiv / udiv and srem / urem), shifts are logical for
// unsigned and arithmetic for signed types. The op table (math-ops.ts) keeps one f64 `element`
// per op for the float dtypes; an integer op listed in WRAPPING_OPS below is evaluated by
// `integerElement` on integer operands and its result wrapped by `wrapInteger` instead of the
// saturating rounding of a cast.
//
// 64-bit integers (`i64`, `u64`): host tensors store them exactly (8 bytes), but the evaluation
// carries every value as an f64, so a 64-bit value is exact while |x| <= 2^53 (every offset,
// index and stride a kernel computes) and reads back as the nearest double beyond. The wrapping
// ops compute on them exactly (BigInt, modulo 2^64) and round the wrapped result once; an
// operand at or past the type's end (2^63 or 2^64, the rounding of the largest value) stands for
// that largest value.

/** Width and signedness of an integer dtype. */
export interface IntegerType {
  readonly bits: number;
  readonly signed: boolean;
}

const INTEGER_TYPES: Readonly<Partial<Record<Dtype, IntegerType>>> = Object.freeze({
  i8: Object.freeze({ bits: 8, signed: true }),
  i32: Object.freeze({ bits: 32, signed: true }),
  u32: Object.freeze({ bits: 32, signed: false }),
  u8: Object.freeze({ bits: 8, signed: false }),
  u16: Object.freeze({ bits: 16, signed: false }),
  i16: Object.freeze({ bits: 16, signed: true }),
  i64: Object.freeze({ bits: 64, signed: true }),
  u64: Object.freeze({ bits: 64, signed: false }),
});

/** The integer type of `dtype`, or undefined for the floats and `i1` (booleans are not wrapped). */
export function integerType(dtype: Dtype | undefined): IntegerType | undefined {
  return dtype === undefined ? undefined : INTEGER_TYPES[dtype];
}

/**
 * The integer `x` modulo 2^bits, in the type's range: [-2^(bits-1), 2^(bits-1)) signed, [0, 2^bits)
 * unsigned. `x` is first truncated toward zero (NaN and ±Inf give 0); it must be exact in f64
 * (|x| <= 2^53), as every integer op's result before wrapping is. On a 64-bit type a value in
 * the type's range as a double (its end included: the rounding of the largest value) is kept.
 */
export function wrapInteger(x: number, type: IntegerType): number {
  if (!Number.isFinite(x)) return 0;
  if (type.bits > 32) {
    const [min, end] = type.signed ? [-(2 ** 63), 2 ** 63] : [0, 2 ** 64];
    if (x >= min && x <= end) return Math.trunc(x) + 0;
    return Number(wrapBig(BigInt(Math.trunc(x)), type));
  }
  const modulus = 2 ** type.bits;
  let r = Math.trunc(x) % modulus;
  if (r < 0) r += modulus;
  if (type.signed && r >= modulus / 2) r -= modulus;
  return r + 0; // never -0
}

/**
 * The ops whose result on an integer dtype wraps (a reduction or scan wraps its f64 total). Every
 * other op rounds its f64 result to the dtype with saturation (`cast`, `maximum`, `exp`, ...).
 */
export const WRAPPING_OPS: ReadonlySet<string> = new Set([
  "add",
  "sub",
  "mul",
  "div",
  "fma",
  "abs",
  "and",
  "or",
  "xor",
  "not",
  "mod",
  "shl",
  "shr",
  "sum",
  "cumsum",
  "cumprod",
]);

/** The value an integer division by zero gives: all bits set (-1 signed, 2^bits - 1 unsigned). */
function divisionByZero(type: IntegerType): number {
  return type.signed ? -1 : 2 ** type.bits - 1;
}

/** A shift amount that is in range: 0 <= n < bits (others are poison in LLVM; see shl, shr). */
function inRange(n: number, type: IntegerType): boolean {
  return n >= 0 && n < type.bits;
}

/**
 * Integer versions of the ops whose f64 formula is not right on integers (their results are
 * congruent to the exact result modulo 2^32, exact in f64, and wrapped afterwards). The ops of
 * WRAPPING_OPS missing here use their table `element` on the integer values (`add`, `sub`, `abs`
 * are exact in f64; `and`, `or`, `xor` work on the low 32 bits, JavaScript's bitwise operators).
 */
const INTEGER_ELEMENTS: Readonly<Record<string, (type: IntegerType) => ElementFn>> = {
  // The low 32 bits of the product (an f64 product of two 32-bit integers is not exact).
  mul: () => (a, b) => Math.imul(a, b),
  fma: () => (a, b, c) => Math.imul(a, b) + c,
  // Truncation toward zero (C, LLVM sdiv / udiv); exact: a 32-bit quotient is never rounded
  // across an integer in f64.
  // On an unsigned type a negative number operand is its two's complement first (`-3` on u32 is
  // 2^32 - 3, as Triton converts the literal), as the wide types' `toBig` reads it.
  div: (type) => (a, b) => {
    const [x, y] = type.signed ? [a, b] : [wrapInteger(a, type), wrapInteger(b, type)];
    return y === 0 ? divisionByZero(type) : Math.trunc(x / y);
  },
  // The remainder with the dividend's sign (C, LLVM srem / urem); `a % 0` is `a`.
  mod: (type) => (a, b) => {
    const [x, y] = type.signed ? [a, b] : [wrapInteger(a, type), wrapInteger(b, type)];
    return y === 0 ? x : x % y;
  },
  not: () => (a) => ~a,
  // Amounts outside [0, bits) (negative ones included) shift every bit out: 0 for shl and the
  // logical shr, the sign (0 or -1) for the arithmetic shr (PTX's clamped shifts).
  shl: (type) => (a, n) => (inRange(n, type) ? a << n : 0),
  shr: (type) => (a, n) =>
    type.signed ? (inRange(n, type) ? a >> n : a < 0 ? -1 : 0) : inRange(n, type) ? a >>> n : 0,
};

/** `v` modulo 2^bits in the range of `type` (64-bit types). */
function wrapBig(v: bigint, type: IntegerType): bigint {
  return type.signed ? BigInt.asIntN(type.bits, v) : BigInt.asUintN(type.bits, v);
}

/**
 * The integer `x` (an f64 operand of a 64-bit op) as a BigInt of `type`: truncated; a negative
 * operand of an unsigned type is its two's complement (a literal `-1` is all bits set, as Triton
 * converts it, and as the 32-bit types' operators read it); past the range's top (2^63 or 2^64,
 * the nearest doubles of the largest values) the largest value.
 */
function toBig(x: number, type: IntegerType): bigint {
  if (!Number.isFinite(x)) return 0n;
  const v = BigInt(Math.trunc(x));
  if (!type.signed && v < 0n) return BigInt.asUintN(type.bits, v);
  const max = type.signed ? 2n ** 63n - 1n : 2n ** 64n - 1n;
  const min = type.signed ? -(2n ** 63n) : 0n;
  return v > max ? max : v < min ? min : v;
}

/** A binary 64-bit op on exact BigInt operands, its result wrapped and rounded to f64 once. */
function big(type: IntegerType, f: (a: bigint, b: bigint, c: bigint) => bigint): ElementFn {
  return (a, b, c) => Number(wrapBig(f(toBig(a, type), toBig(b, type), toBig(c, type)), type));
}

/**
 * The ops of WRAPPING_OPS on 64-bit types: every one exact in BigInt (f64 sums and products, and
 * JavaScript's 32-bit bitwise operators, are not). Division and shifts as for the narrow types.
 */
const WIDE_ELEMENTS: Readonly<Record<string, (type: IntegerType) => ElementFn>> = {
  add: (type) => big(type, (a, b) => a + b),
  sub: (type) => big(type, (a, b) => a - b),
  mul: (type) => big(type, (a, b) => a * b),
  fma: (type) => big(type, (a, b, c) => a * b + c),
  div: (type) => big(type, (a, b) => (b === 0n ? -1n : a / b)), // -1n wraps to all bits set
  mod: (type) => big(type, (a, b) => (b === 0n ? a : a % b)),
  abs: (type) => big(type, (a) => (a < 0n ? -a : a)),
  and: (type) => big(type, (a, b) => a & b),
  or: (type) => big(type, (a, b) => a | b),
  xor: (type) => big(type, (a, b) => a ^ b),
  not: (type) => big(type, (a) => ~a),
  // `n` is read as a number: amounts outside [0, 64) shift every bit out (see shl, shr above).
  shl: (type) => (a, n) => (inRange(n, type) ? Number(wrapBig(toBig(a, type) << BigInt(n), type)) : 0),
  shr: (type) => (a, n) => {
    const v = toBig(a, type); // BigInt's >> is arithmetic; unsigned values are never negative
    return inRange(n, type) ? Number(v >> BigInt(n)) : v < 0n ? -1 : 0;
  },
};

/** The element function of `op` on integer operands of `type` (before wrapping). */
export function integerElement(op: string, type: IntegerType, element: ElementFn): ElementFn {
  const table = type.bits > 32 ? WIDE_ELEMENTS : INTEGER_ELEMENTS;
  return table[op]?.(type) ?? element;
}

/**
 * Integer versions of the line ops whose f64 line is not exact on integers: `cumprod` multiplies
 * in BigInt and wraps after every step (an f64 product past 2^53 would round before wrapping).
 */
const INTEGER_LINES: Readonly<Record<string, (type: IntegerType) => LineFn>> = {
  cumprod: (type) => (x, xBase, out, outBase, length, stride) => {
    let product = 1n;
    for (let l = 0; l < length; l++) {
      product = wrapBig(product * toBig(x[xBase + l * stride] as number, type), type);
      out[outBase + l * stride] = Number(product);
    }
  },
};

/** The line function of `op` on integer operands of `type` (its values then wrapped as any). */
export function integerLine(op: string, type: IntegerType, line: LineFn): LineFn {
  return INTEGER_LINES[op]?.(type) ?? line;
}
