// Reductions and softmax of packages/tl/README.md ("Reductions and softmax"): along one axis, in
// f64 in index order, rounded once to the input's dtype.

import { invalid, roundTo } from "./dtype.js";
import { integerSum, wraps } from "./integer.js";
import { formatShape, fromRounded, type RefTensor } from "./tensor.js";

/** The reductions (`tl.sum`, `tl.max`, `tl.min`). */
export const REDUCE_OPS = Object.freeze(["sum", "max", "min"] as const);
export type ReduceOp = (typeof REDUCE_OPS)[number];

/** `axis` in `[-rank, rank)` as a dimension index. */
function realAxis(call: string, x: RefTensor, axis: number): number {
  const rank = x.shape.length;
  if (!Number.isInteger(axis) || axis < -rank || axis >= rank) {
    throw invalid(call, `axis ${axis} is out of range for ${formatShape(x.shape)}.`);
  }
  return axis < 0 ? axis + rank : axis;
}

/** Outer count, axis length and inner count of `x` around `axis`. */
function split(x: RefTensor, axis: number): [number, number, number] {
  const outer = x.shape.slice(0, axis).reduce((p, s) => p * s, 1);
  const inner = x.shape.slice(axis + 1).reduce((p, s) => p * s, 1);
  return [outer, x.shape[axis] as number, inner];
}

/**
 * `tl.sum / tl.max / tl.min (x, axis)`: that axis becomes 1. `sum` adds in f64 in index order
 * from 0; `max` / `min` are `Math.max` / `Math.min` over the axis (NaN if any element is NaN,
 * +0 above -0). Rounded once to `x.dtype`; an integer sum is exact, wrapped to the dtype.
 */
export function reduce(op: ReduceOp, x: RefTensor, axis = -1): RefTensor {
  if (!(REDUCE_OPS as readonly string[]).includes(op)) {
    throw invalid("reduce", `unknown op ${JSON.stringify(op)}; use ${REDUCE_OPS.join(", ")}.`);
  }
  const a = realAxis(op, x, axis);
  const [outer, length, inner] = split(x, a);
  const out = new Float64Array(outer * inner);
  for (let o = 0; o < outer; o++) {
    for (let i = 0; i < inner; i++) {
      let acc = op === "sum" ? 0 : op === "max" ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY;
      const line: number[] = [];
      for (let l = 0; l < length; l++) {
        const v = x.data[(o * length + l) * inner + i] as number;
        line.push(v);
        acc = op === "sum" ? acc + v : op === "max" ? Math.max(acc, v) : Math.min(acc, v);
      }
      out[o * inner + i] = op === "sum" && wraps(x.dtype) ? integerSum(x.dtype, line) : roundTo(x.dtype, acc);
    }
  }
  return fromRounded(
    out,
    x.shape.map((extent, d) => (d === a ? 1 : extent)),
    x.dtype,
  );
}

/**
 * `tl.softmax(x, axis)`: per line along the axis, in f64, `m = max`, `e = exp(x - m)`,
 * `s = sum of e` (index order), `e / s`, each rounded once to `x.dtype`.
 */
export function softmax(x: RefTensor, axis = -1): RefTensor {
  const a = realAxis("softmax", x, axis);
  const [outer, length, inner] = split(x, a);
  const out = new Float64Array(x.data.length);
  const e = new Float64Array(length);
  for (let o = 0; o < outer; o++) {
    for (let i = 0; i < inner; i++) {
      const at = (l: number) => (o * length + l) * inner + i;
      let m = Number.NEGATIVE_INFINITY;
      for (let l = 0; l < length; l++) m = Math.max(m, x.data[at(l)] as number);
      let s = 0;
      for (let l = 0; l < length; l++) {
        e[l] = Math.exp((x.data[at(l)] as number) - m);
        s += e[l] as number;
      }
      for (let l = 0; l < length; l++) out[at(l)] = roundTo(x.dtype, (e[l] as number) / s);
    }
  }
  return fromRounded(out, x.shape, x.dtype);
}
