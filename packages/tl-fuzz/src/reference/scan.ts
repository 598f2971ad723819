// The scans of packages/tl/README.md ("Reductions and softmax", "Integer arithmetic wraps"):
// `cumsum` and `cumprod` along one axis, the shape kept. On floats element l of a line is
// x_0 + ... + x_l (x_0 · ... · x_l) computed in f64 in index order and rounded once to the dtype;
// on the integer dtypes `cumprod` is the exact product wrapped to the dtype (BigInt here), and
// `cumsum` the sum wrapped as `sum`'s. Written from that text alone.

import { invalid, roundTo } from "./dtype.js";
import { exact, integerSum, wraps, wrapTo } from "./integer.js";
import { formatShape, fromRounded, type RefTensor } from "./tensor.js";

/** The scans (`tl.cumsum`, `tl.cumprod`). */
export const SCAN_OPS = Object.freeze(["cumsum", "cumprod"] as const);
export type ScanOp = (typeof SCAN_OPS)[number];

/** `tl.cumsum / tl.cumprod (x, axis)`: inclusive prefix sums or products along `axis`. */
export function scan(op: ScanOp, x: RefTensor, axis = 0): RefTensor {
  if (!(SCAN_OPS as readonly string[]).includes(op)) {
    throw invalid("scan", `unknown op ${JSON.stringify(op)}; use ${SCAN_OPS.join(", ")}.`);
  }
  const rank = x.shape.length;
  if (!Number.isInteger(axis) || axis < -rank || axis >= rank) {
    throw invalid(op, `axis ${axis} is out of range for ${formatShape(x.shape)}.`);
  }
  const a = axis < 0 ? axis + rank : axis;
  const outer = x.shape.slice(0, a).reduce((p, s) => p * s, 1);
  const inner = x.shape.slice(a + 1).reduce((p, s) => p * s, 1);
  const length = x.shape[a] as number;
  const integer = wraps(x.dtype);
  const out = new Float64Array(x.data.length);
  for (let o = 0; o < outer; o++) {
    for (let i = 0; i < inner; i++) {
      const at = (l: number) => (o * length + l) * inner + i;
      const line: number[] = [];
      let acc = op === "cumsum" ? 0 : 1;
      let product = 1n;
      for (let l = 0; l < length; l++) {
        const v = x.data[at(l)] as number;
        line.push(v);
        if (op === "cumsum") {
          acc += v;
          out[at(l)] = integer ? integerSum(x.dtype, line) : roundTo(x.dtype, acc);
        } else if (integer) {
          product *= exact(x.dtype, v);
          out[at(l)] = wrapTo(x.dtype, product);
        } else {
          acc *= v;
          out[at(l)] = roundTo(x.dtype, acc);
        }
      }
    }
  }
  return fromRounded(out, x.shape, x.dtype);
}
