import { KbError } from "@kb/errors";
import { type Dtype, formatShape, shapeSize, Tensor } from "@kb/tensor";

type Unary = (x: number) => number;
type Binary = (x: number, y: number) => number;

const UNARY: Readonly<Record<string, Unary>> = {
  exp: Math.exp,
  log: Math.log,
  sqrt: Math.sqrt,
  abs: Math.abs,
  sigmoid: (x) => 1 / (1 + Math.exp(-x)),
  cos: Math.cos,
  sin: Math.sin,
  relu: (x) => Math.max(x, 0),
  cast: (x) => x,
};

const BINARY: Readonly<Record<string, Binary>> = {
  add: (x, y) => x + y,
  sub: (x, y) => x - y,
  mul: (x, y) => x * y,
  div: (x, y) => x / y,
  maximum: (x, y) => (x >= y || Number.isNaN(x) ? x : y),
  minimum: (x, y) => (x <= y || Number.isNaN(x) ? x : y),
};

/**
 * One math op of the tl surface on host tensors: computed in double precision, rounded once to
 * `dtype`. Reductions (`sum`, `max`, `min`) reduce `axis` to 1; `softmax` is expanded to max,
 * subtract, exp, sum and divide along `axis`; `fill` / `iota` take no input.
 */
export function applyMath(
  op: string,
  inputs: readonly Tensor[],
  shapeOut: readonly number[],
  dtype: Dtype,
  axis: number | null,
  scalars: readonly number[],
): Tensor {
  const size = shapeSize(shapeOut);
  const values = new Float64Array(size);
  const x = inputs.map((input) => input.toFloat64Array());
  const need = (count: number) => {
    if (x.length !== count) {
      throw new KbError("OPLOG_INVALID", `math op "${op}" needs ${count} input(s), got ${x.length}.`);
    }
  };
  const first = x[0] as Float64Array;
  const unary = UNARY[op];
  const binary = BINARY[op];
  if (op === "fill" || op === "iota") {
    need(0);
    const start = scalars[0] ?? 0;
    for (let i = 0; i < size; i++) values[i] = op === "fill" ? start : start + i;
  } else if (unary !== undefined) {
    need(1);
    sameSize(op, first, size);
    for (let i = 0; i < size; i++) values[i] = unary(first[i] as number);
  } else if (binary !== undefined) {
    if (x.length === 1) {
      const scalar = scalars[0];
      if (scalar === undefined)
        throw new KbError("OPLOG_INVALID", `math op "${op}" has one input and no scalar.`);
      sameSize(op, first, size);
      for (let i = 0; i < size; i++) values[i] = binary(first[i] as number, scalar);
    } else {
      need(2);
      const second = x[1] as Float64Array;
      sameSize(op, first, size);
      sameSize(op, second, size);
      for (let i = 0; i < size; i++) values[i] = binary(first[i] as number, second[i] as number);
    }
  } else if (op === "fma" || op === "where") {
    need(3);
    const [a, b, c] = x as [Float64Array, Float64Array, Float64Array];
    for (const input of x) sameSize(op, input, size);
    for (let i = 0; i < size; i++) {
      values[i] =
        op === "fma"
          ? (a[i] as number) * (b[i] as number) + (c[i] as number)
          : a[i] !== 0
            ? (b[i] as number)
            : (c[i] as number);
    }
  } else if (op === "clamp") {
    need(1);
    const [lo, hi] = scalars as [number, number];
    sameSize(op, first, size);
    for (let i = 0; i < size; i++) values[i] = Math.min(Math.max(first[i] as number, lo), hi);
  } else if (op === "sum" || op === "max" || op === "min" || op === "softmax") {
    need(1);
    rowwise(op, inputs[0] as Tensor, first, values, axis);
  } else {
    throw new KbError("OPLOG_INVALID", `unknown math op "${op}".`);
  }
  return Tensor.fromArray(values, shapeOut, dtype);
}

function sameSize(op: string, values: Float64Array, size: number): void {
  if (values.length !== size) {
    throw new KbError(
      "OPLOG_INVALID",
      `math op "${op}": an input has ${values.length} elements, the output ${size}.`,
    );
  }
}

/** Reductions and softmax along `axis`: out[o, i] over x[o, l, i]. */
function rowwise(op: string, input: Tensor, x: Float64Array, out: Float64Array, axis: number | null): void {
  const shape = input.shape;
  const rank = shape.length;
  const a = axis === null ? rank - 1 : axis < 0 ? axis + rank : axis;
  if (!(a >= 0 && a < rank)) {
    throw new KbError(
      "OPLOG_INVALID",
      `math op "${op}": axis ${axis} is out of range for ${formatShape(shape)}.`,
    );
  }
  const length = shape[a] as number;
  const inner = shape.slice(a + 1).reduce((p, s) => p * s, 1);
  const outer = shape.slice(0, a).reduce((p, s) => p * s, 1);
  for (let o = 0; o < outer; o++) {
    for (let i = 0; i < inner; i++) {
      const base = o * length * inner + i;
      if (op === "softmax") {
        let max = Number.NEGATIVE_INFINITY;
        for (let l = 0; l < length; l++) max = Math.max(max, x[base + l * inner] as number);
        let sum = 0;
        for (let l = 0; l < length; l++) {
          const e = Math.exp((x[base + l * inner] as number) - max);
          out[base + l * inner] = e;
          sum += e;
        }
        for (let l = 0; l < length; l++) out[base + l * inner] = (out[base + l * inner] as number) / sum;
        continue;
      }
      let acc = op === "sum" ? 0 : op === "max" ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY;
      for (let l = 0; l < length; l++) {
        const v = x[base + l * inner] as number;
        acc = op === "sum" ? acc + v : op === "max" ? Math.max(acc, v) : Math.min(acc, v);
      }
      out[o * inner + i] = acc;
    }
  }
}
