// Triton's shape calls of packages/tl/README.md ("Memory, constants and views": `join`, `split`,
// `permute`, `cat`) and the scatter (`store` with `offsets`), as host operations: values move,
// none is rounded. Written from the README's table alone.

import { invalid } from "./dtype.js";
import { formatShape, fromRounded, type RefTensor, sizeOf } from "./tensor.js";

/** `join(a, b)`: `[...S, 2]` with `out[..., 0] = a`, `out[..., 1] = b`. */
export function join(a: RefTensor, b: RefTensor): RefTensor {
  if (formatShape(a.shape) !== formatShape(b.shape) || a.dtype !== b.dtype)
    throw invalid(
      "join",
      `a and b differ: ${formatShape(a.shape)} ${a.dtype}, ${formatShape(b.shape)} ${b.dtype}.`,
    );
  const out = new Float64Array(a.data.length * 2);
  a.data.forEach((x, i) => {
    out[2 * i] = x;
    out[2 * i + 1] = b.data[i] as number;
  });
  return fromRounded(out, [...a.shape, 2], a.dtype);
}

/** `split(x)`: `x` `[...S, 2]` -> `[x[..., 0], x[..., 1]]`, each `S` (`[1]` for `x` `[2]`). */
export function split(x: RefTensor): [RefTensor, RefTensor] {
  if (x.shape.at(-1) !== 2)
    throw invalid("split", `the last dimension must be 2, got ${formatShape(x.shape)}.`);
  const shape = x.shape.length === 1 ? [1] : x.shape.slice(0, -1);
  const half = (k: number) => x.data.filter((_, i) => i % 2 === k);
  return [fromRounded(half(0), shape, x.dtype), fromRounded(half(1), shape, x.dtype)];
}

/** `permute(x, dims)`: `out[j_0, ..., j_{r-1}] = x[i_0, ..., i_{r-1}]` with `j_k = i_{dims[k]}`. */
export function permute(x: RefTensor, dims: readonly number[]): RefTensor {
  const rank = x.shape.length;
  const real = dims.map((d) => (d < 0 ? d + rank : d));
  if (real.length !== rank || [...real].sort().some((d, k) => d !== k))
    throw invalid("permute", `dims ${JSON.stringify(dims)} are not a permutation of 0 .. ${rank - 1}.`);
  const shape = real.map((d) => x.shape[d] as number);
  const out = new Float64Array(x.data.length);
  const index = new Array<number>(rank).fill(0);
  for (let flat = 0; flat < x.data.length; flat++) {
    // index: x's multi-index of element `flat`; its place in out has j_k = index[dims[k]].
    let rest = flat;
    for (let d = rank - 1; d >= 0; d--) {
      index[d] = rest % (x.shape[d] as number);
      rest = Math.floor(rest / (x.shape[d] as number));
    }
    let at = 0;
    for (let k = 0; k < rank; k++) at = at * (shape[k] as number) + (index[real[k] as number] as number);
    out[at] = x.data[flat] as number;
  }
  return fromRounded(out, shape, x.dtype);
}

/** `cat(a, b)`: `[n + m, ...R]`, `a`'s elements then `b`'s in row-major order. */
export function cat(a: RefTensor, b: RefTensor): RefTensor {
  if (a.dtype !== b.dtype || formatShape(a.shape.slice(1)) !== formatShape(b.shape.slice(1)))
    throw invalid(
      "cat",
      `a and b differ: ${formatShape(a.shape)} ${a.dtype}, ${formatShape(b.shape)} ${b.dtype}.`,
    );
  const out = new Float64Array(a.data.length + b.data.length);
  out.set(a.data);
  out.set(b.data, a.data.length);
  return fromRounded(out, [(a.shape[0] as number) + (b.shape[0] as number), ...a.shape.slice(1)], a.dtype);
}

/** `x` with another shape of the same size (`tl.reshape`: the same elements in row-major order). */
export function reshape(x: RefTensor, shape: readonly number[]): RefTensor {
  if (sizeOf(shape) !== x.data.length)
    throw invalid("reshape", `${formatShape(shape)} does not hold the ${x.data.length} elements.`);
  return fromRounded(x.data, shape, x.dtype);
}

/**
 * `store(base, x, { offsets, mask })` into `memory` (row-major elements): for `i` in row-major
 * order where `mask[i]` is 1 (every `i` without a mask), element `i` of `x` is written at
 * `offsets[i]`; the later `i` wins on a shared offset.
 */
export function scatter(
  memory: Float64Array,
  x: RefTensor,
  offsets: RefTensor,
  mask: RefTensor | null = null,
): void {
  offsets.data.forEach((offset, i) => {
    if (mask !== null && mask.data[i] === 0) return;
    if (!Number.isInteger(offset) || offset < 0 || offset >= memory.length)
      throw invalid("scatter", `offset ${offset} of element ${i} is outside the ${memory.length} elements.`);
    memory[offset] = x.data[i] as number;
  });
}
