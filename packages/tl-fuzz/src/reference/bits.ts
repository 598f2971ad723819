// Integer bit operations of packages/tl/README.md ("Integer arithmetic wraps", "Elementwise
// math"): `and or xor` act on the two's-complement bits, `not(x)` is `~x` = `-x - 1` wrapped,
// `shl(a, n)` is `wrap_d(a · 2^n)` and `shr(a, n)` `floor(a / 2^n)` (arithmetic on the signed
// dtypes); an amount outside [0, bits) shifts every bit out: 0, or -1 for a negative `a` in `shr`.
// Computed with BigInt from that text alone.

import { invalid } from "./dtype.js";
import { exact, wraps, wrapTo } from "./integer.js";
import { fromRounded, type RefTensor } from "./tensor.js";

/** The bit operations (`tl.and`, ...); `not` takes one operand. */
export const BIT_OPS = Object.freeze(["and", "or", "xor", "shl", "shr", "not"] as const);
export type BitOp = (typeof BIT_OPS)[number];

const WIDTH = { i8: 8, i32: 32, u32: 32, u8: 8, u16: 16, i16: 16, i64: 64, u64: 64 } as const;

/** One element of `op(a, b)` on integers of `dtype` (`b` ignored by `not`). */
export function applyBits(op: BitOp, dtype: keyof typeof WIDTH, a: number, b: number): number {
  // Both operands as integers of the dtype: a 64-bit element at the type's end (2^63, 2^64, the
  // double its largest value reads as) is that largest value, whichever side it is on.
  const x = exact(dtype, a);
  const y = exact(dtype, b);
  const bits = WIDTH[dtype];
  switch (op) {
    case "and":
      return wrapTo(dtype, x & y);
    case "or":
      return wrapTo(dtype, x | y);
    case "xor":
      return wrapTo(dtype, x ^ y);
    case "not":
      return wrapTo(dtype, -x - 1n);
    case "shl":
      return b < 0 || b >= bits ? 0 : wrapTo(dtype, x * 2n ** y);
    case "shr":
      // BigInt's >> is floor(x / 2^n): arithmetic on the signed dtypes, logical on u32 (x >= 0).
      return b < 0 || b >= bits ? (a < 0 ? -1 : 0) : wrapTo(dtype, x >> y);
  }
}

/** True for the dtypes the bit operations take. */
function isWidth(dtype: string): dtype is keyof typeof WIDTH {
  return Object.hasOwn(WIDTH, dtype);
}

/** `tl.<op>(a, b)`: `b` a tensor of `a`'s shape and dtype or an integer; `a` an integer tensor. */
export function bits(op: BitOp, a: RefTensor, b: RefTensor | number = 0): RefTensor {
  if (!wraps(a.dtype) || !isWidth(a.dtype)) {
    throw invalid(op, `needs an integer tensor (${Object.keys(WIDTH).join(", ")}), got ${a.dtype}.`);
  }
  const dtype = a.dtype;
  if (typeof b !== "number" && (b.dtype !== dtype || b.data.length !== a.data.length)) {
    throw invalid(op, `operands differ in dtype or size: ${dtype}, ${b.dtype}.`);
  }
  if (typeof b === "number" && !Number.isInteger(b)) throw invalid(op, `needs an integer, got ${b}.`);
  const out = a.data.map((x, i) =>
    applyBits(op, dtype, x, typeof b === "number" ? b : (b.data[i] as number)),
  );
  return fromRounded(out, a.shape, dtype);
}
