import type { NarrowFloatDtype } from "@kb/spec";

/**
 * The fp8 and fp4 element formats: sign, `exponentBits`, `mantissaBits` (fraction), exponent
 * `bias`, the bits of the largest finite magnitude, and what a NaN and an infinity encode to.
 */
interface NarrowFormat {
  readonly exponentBits: number;
  readonly mantissaBits: number;
  readonly bias: number;
  /** Bits of the largest finite magnitude (sign clear). */
  readonly maxBits: number;
  /** Bits a NaN stores (the format's NaN, or +0 for a format without one). */
  readonly nanBits: number;
  /** Bits of +Inf, or -1 when the format has no infinity (±Inf then saturates to ±max). */
  readonly infBits: number;
}

const FORMATS: Readonly<Record<NarrowFloatDtype, NarrowFormat>> = Object.freeze({
  // OCP E4M3FN: exponent 15 holds normal numbers; only S.1111.111 is NaN; no infinities.
  f8e4m3: { exponentBits: 4, mantissaBits: 3, bias: 7, maxBits: 0x7e, nanBits: 0x7f, infBits: -1 },
  // IEEE-like E5M2: exponent 31 holds ±Inf (fraction 0) and NaNs.
  f8e5m2: { exponentBits: 5, mantissaBits: 2, bias: 15, maxBits: 0x7b, nanBits: 0x7e, infBits: 0x7c },
  // OCP E2M1 (the mxfp4 element): ±{0, 0.5, 1, 1.5, 2, 3, 4, 6}, no NaN, no infinities.
  f4e2m1: { exponentBits: 2, mantissaBits: 1, bias: 1, maxBits: 0x7, nanBits: 0x0, infBits: -1 },
});

/** `q` (a non-negative double) rounded to an integer, ties to even. */
function roundHalfEven(q: number): number {
  const floor = Math.floor(q);
  const rest = q - floor; // exact: q < 2^53
  return rest > 0.5 || (rest === 0.5 && floor % 2 === 1) ? floor + 1 : floor;
}

/**
 * The bits (0..255; 0..15 for `f4e2m1`) of the `dtype` value nearest to `x`, rounded directly
 * from the double, ties to even, subnormals included. Finite magnitudes beyond the largest finite
 * value saturate to it (±448 in `f8e4m3`, ±57344 in `f8e5m2`, ±6 in `f4e2m1`), as Triton's
 * conversions do (`cvt.rn.satfinite`); ±Inf stays ±Inf in `f8e5m2` (which has infinities) and
 * saturates in the two formats without them. NaN stores the format's NaN (`0x7f` in `f8e4m3`,
 * `0x7e` in `f8e5m2`) and +0 in `f4e2m1`, which has none. The sign of zero is kept.
 */
export function encodeNarrowFloat(x: number, dtype: NarrowFloatDtype): number {
  const format = FORMATS[dtype];
  const { mantissaBits, bias, maxBits, infBits } = format;
  if (Number.isNaN(x)) return format.nanBits;
  const signBit = 1 << (format.exponentBits + mantissaBits);
  const sign = x < 0 || Object.is(x, -0) ? signBit : 0;
  const a = Math.abs(x);
  if (a === Number.POSITIVE_INFINITY) return sign | (infBits >= 0 ? infBits : maxBits);
  const minExponent = 1 - bias;
  let bits: number;
  if (a < 2 ** minExponent) {
    // Subnormal (or zero): a fixed quantum of 2^(minExponent - mantissaBits); rounding up to
    // 2^mantissaBits gives the smallest normal's encoding (exponent field 1, fraction 0).
    bits = roundHalfEven(a * 2 ** (mantissaBits - minExponent));
  } else {
    let exponent = Math.floor(Math.log2(a));
    if (2 ** exponent > a) exponent -= 1;
    else if (2 ** (exponent + 1) <= a) exponent += 1;
    // A carry out of the fraction (r = 2^(mantissaBits + 1)) moves into the exponent field; past
    // the largest finite encoding the min() below saturates (the encodings are ordered).
    const r = roundHalfEven(a * 2 ** (mantissaBits - exponent));
    bits = ((exponent + bias) << mantissaBits) + r - 2 ** mantissaBits;
  }
  return sign | Math.min(bits, maxBits);
}

const decodeTables = new Map<NarrowFloatDtype, Float32Array>();

/** Every value of `dtype` by bit pattern (256 entries; `f4e2m1` repeats its 16 values). */
export function narrowFloatValueTable(dtype: NarrowFloatDtype): Float32Array {
  const cached = decodeTables.get(dtype);
  if (cached) return cached;
  const { exponentBits, mantissaBits, bias, maxBits, infBits } = FORMATS[dtype];
  const table = new Float32Array(256);
  const width = exponentBits + mantissaBits + 1;
  for (let raw = 0; raw < 256; raw++) {
    const bits = raw & ((1 << width) - 1);
    const magnitudeBits = bits & ((1 << (width - 1)) - 1);
    const sign = bits >> (width - 1) === 1 ? -1 : 1;
    const exponent = magnitudeBits >> mantissaBits;
    const fraction = magnitudeBits & ((1 << mantissaBits) - 1);
    let value: number;
    if (magnitudeBits > maxBits)
      value = infBits >= 0 && magnitudeBits === infBits ? Number.POSITIVE_INFINITY : Number.NaN;
    else if (exponent === 0) value = fraction * 2 ** (1 - bias - mantissaBits);
    else value = (2 ** mantissaBits + fraction) * 2 ** (exponent - bias - mantissaBits);
    table[raw] = sign * value;
  }
  decodeTables.set(dtype, table);
  return table;
}

/**
 * The value of the `dtype` element with bits `bits` (the low 8 bits; the low 4 for `f4e2m1`,
 * stored one per byte in the low nibble), exact: every fp8 and fp4 value is a binary32.
 */
export function decodeNarrowFloat(bits: number, dtype: NarrowFloatDtype): number {
  return narrowFloatValueTable(dtype)[bits & 0xff]!;
}

/** The largest finite value of each fp8 and fp4 dtype (448, 57344, 6). */
export function narrowFloatMax(dtype: NarrowFloatDtype): number {
  return decodeNarrowFloat(FORMATS[dtype].maxBits, dtype);
}
