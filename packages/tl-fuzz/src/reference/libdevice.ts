// The libdevice calls of packages/tl/README.md ("Elementwise math": asin acos atan sinh cosh
// log1p expm1 cbrt, and the binary atan2 and hypot): each element the platform's f64 function of
// the exact operand value, rounded once to the result dtype. erfinv is not evaluated here.

import { checkDtype, invalid, roundTo } from "./dtype.js";
import { fromRounded, type RefTensor } from "./tensor.js";

/** The unary libdevice calls (`tl.asin`, ...). */
export const LIBDEVICE_OPS = Object.freeze([
  "asin",
  "acos",
  "atan",
  "sinh",
  "cosh",
  "log1p",
  "expm1",
  "cbrt",
] as const);
export type LibdeviceOp = (typeof LIBDEVICE_OPS)[number];

const FUNCTIONS: Readonly<Record<LibdeviceOp, (x: number) => number>> = {
  asin: Math.asin,
  acos: Math.acos,
  atan: Math.atan,
  sinh: Math.sinh,
  cosh: Math.cosh,
  log1p: Math.log1p,
  expm1: Math.expm1,
  cbrt: Math.cbrt,
};

/** True when `op` is a unary libdevice call. */
export function isLibdeviceOp(op: string): op is LibdeviceOp {
  return (LIBDEVICE_OPS as readonly string[]).includes(op);
}

/** `tl.asin(x)` etc.: same shape and dtype. */
export function libdevice(op: LibdeviceOp, x: RefTensor): RefTensor {
  if (!isLibdeviceOp(op))
    throw invalid("libdevice", `unknown op ${JSON.stringify(op)}; use ${LIBDEVICE_OPS.join(", ")}.`);
  checkDtype(op, x.dtype);
  const f = FUNCTIONS[op];
  const out = new Float64Array(x.data.length);
  for (let i = 0; i < out.length; i++) out[i] = roundTo(x.dtype, f(x.data[i] as number));
  return fromRounded(out, x.shape, x.dtype);
}
