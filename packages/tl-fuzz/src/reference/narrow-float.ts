// The fp8 and fp4 element types, rounded as packages/tl/README.md ("Dtypes and rounding") states:
// to the nearest value, ties to the even encoding, finite overflow saturating to the largest
// finite value, ±Inf kept in f8e5m2 and saturated in the two formats without infinities, NaN kept
// (f4e2m1 has none: it stores 0). Written from that text by enumerating every finite value: no
// code is shared with @kb/tensor's bit arithmetic, so the two check each other.

/** A narrow float format: fraction bits, exponent bias, and how many non-negative codes are finite. */
interface Narrow {
  readonly fractionBits: number;
  readonly bias: number;
  readonly finiteCodes: number;
  readonly hasInfinity: boolean;
  readonly hasNaN: boolean;
}

const NARROW: Readonly<Record<"f8e4m3" | "f8e5m2" | "f4e2m1", Narrow>> = Object.freeze({
  f8e4m3: { fractionBits: 3, bias: 7, finiteCodes: 127, hasInfinity: false, hasNaN: true },
  f8e5m2: { fractionBits: 2, bias: 15, finiteCodes: 124, hasInfinity: true, hasNaN: true },
  f4e2m1: { fractionBits: 1, bias: 1, finiteCodes: 8, hasInfinity: false, hasNaN: false },
});

/** The narrow float dtypes. */
export type NarrowDtype = keyof typeof NARROW;

/** True for f8e4m3, f8e5m2 and f4e2m1. */
export function isNarrow(dtype: string): dtype is NarrowDtype {
  return dtype === "f8e4m3" || dtype === "f8e5m2" || dtype === "f4e2m1";
}

const valueLists = new Map<NarrowDtype, number[]>();

/** The non-negative finite values of `dtype`, by code (increasing). */
function finiteValues(dtype: NarrowDtype): number[] {
  const known = valueLists.get(dtype);
  if (known) return known;
  const { fractionBits, bias, finiteCodes } = NARROW[dtype];
  const values: number[] = [];
  for (let code = 0; code < finiteCodes; code++) {
    const field = Math.floor(code / 2 ** fractionBits);
    const fraction = code % 2 ** fractionBits;
    values.push(
      field === 0
        ? fraction * 2 ** (1 - bias - fractionBits)
        : (1 + fraction / 2 ** fractionBits) * 2 ** (field - bias),
    );
  }
  valueLists.set(dtype, values);
  return values;
}

/** `x` rounded to the narrow float `dtype`. */
export function roundToNarrow(dtype: NarrowDtype, x: number): number {
  const format = NARROW[dtype];
  if (Number.isNaN(x)) return format.hasNaN ? Number.NaN : 0;
  const values = finiteValues(dtype);
  const max = values[values.length - 1] as number;
  const sign = x < 0 || Object.is(x, -0) ? -1 : 1;
  const a = Math.abs(x);
  if (a === Number.POSITIVE_INFINITY && format.hasInfinity) return x;
  if (a >= max) return sign * max;
  let best = 0;
  for (let code = 1; code < values.length; code++) {
    const d = Math.abs((values[code] as number) - a);
    const bestD = Math.abs((values[best] as number) - a);
    if (d < bestD || (d === bestD && code % 2 === 0)) best = code;
  }
  return sign * (values[best] as number);
}
