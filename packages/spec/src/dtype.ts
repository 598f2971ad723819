import * as z from "zod";

/**
 * An element type of a host tensor: IEEE binary32 (`f32`), IEEE binary16 (`f16`), bfloat16
 * (`bf16`, the top half of a binary32), two's-complement signed integers (`i8`, `i32`), the
 * unsigned 32-bit integer (`u32`, what Philox's `tl.randint` produces), and booleans (`i1`: one
 * byte per element holding 0 or 1, what comparisons produce and masks are), the other
 * integer widths of Triton (`u8`, `u16`, `i16`, `i64`, `u64`: two's complement, little-endian),
 * and the 8-bit floats `f8e4m3` (OCP E4M3FN: no infinities, max 448), `f8e5m2` (IEEE-like, with
 * infinities, max 57344) and the 4-bit float `f4e2m1` (the mxfp4 element, max 6, stored one per
 * byte in the low nibble). The one definition: host tensors, PE commands, the op log and the
 * kernels all name these.
 */
export type Dtype =
  | "f32"
  | "f16"
  | "bf16"
  | "i8"
  | "i32"
  | "i1"
  | "u32"
  | "u8"
  | "u16"
  | "i16"
  | "i64"
  | "u64"
  | "f8e4m3"
  | "f8e5m2"
  | "f4e2m1";

/** Every {@link Dtype}, floats first. */
export const DTYPES: readonly Dtype[] = Object.freeze([
  "f32",
  "f16",
  "bf16",
  "i8",
  "i32",
  "i1",
  "u32",
  "u8",
  "u16",
  "i16",
  "i64",
  "u64",
  "f8e4m3",
  "f8e5m2",
  "f4e2m1",
] as const);

/** The zod schema of a {@link Dtype} (the op log's `dtype` fields; a user's schema may reuse it). */
export const dtypeSchema = z.enum(DTYPES as readonly Dtype[] as [Dtype, ...Dtype[]]);

/** Bytes per element of each {@link Dtype}. */
export const DTYPE_BYTES: Readonly<Record<Dtype, number>> = Object.freeze({
  f32: 4,
  f16: 2,
  bf16: 2,
  i8: 1,
  i32: 4,
  i1: 1,
  u32: 4,
  u8: 1,
  u16: 2,
  i16: 2,
  i64: 8,
  u64: 8,
  f8e4m3: 1,
  f8e5m2: 1,
  f4e2m1: 1,
});

/** True when `value` is one of the {@link DTYPES} names. */
export function isDtype(value: unknown): value is Dtype {
  return typeof value === "string" && DTYPE_NAMES.has(value);
}

/** {@link DTYPES} as a set, for {@link isDtype}: one list of names, not a second copy. */
const DTYPE_NAMES: ReadonlySet<string> = new Set(DTYPES);

/** True for the floating-point dtypes `f32`, `f16`, `bf16`, `f8e4m3`, `f8e5m2` and `f4e2m1`. */
export function isFloatDtype(dtype: Dtype): boolean {
  return dtype === "f32" || dtype === "f16" || dtype === "bf16" || isNarrowFloatDtype(dtype);
}

/** The 8- and 4-bit float dtypes (fp8 and fp4: what `tl.dot` and `tl.dotScaled` take at the fp8 rate). */
export type NarrowFloatDtype = "f8e4m3" | "f8e5m2" | "f4e2m1";

/** True for the fp8 and fp4 dtypes `f8e4m3`, `f8e5m2` and `f4e2m1`. */
export function isNarrowFloatDtype(value: unknown): value is NarrowFloatDtype {
  return value === "f8e4m3" || value === "f8e5m2" || value === "f4e2m1";
}
