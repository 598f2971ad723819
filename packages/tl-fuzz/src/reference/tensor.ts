import { checkDtype, type Dtype, invalid, roundTo } from "./dtype.js";

/**
 * A host tensor of the reference evaluator: dense, row-major, every element a value of `dtype`
 * held exactly as an f64.
 */
export interface RefTensor {
  /** Dimensions, outermost first; non-empty, positive integers. */
  readonly shape: readonly number[];
  readonly dtype: Dtype;
  /** The elements in row-major order, each exactly representable in `dtype`. */
  readonly data: Float64Array;
}

/** The number of elements of `shape`. */
export function sizeOf(shape: readonly number[]): number {
  let size = 1;
  for (const extent of shape) size *= extent;
  return size;
}

/** Throws unless `shape` is a non-empty list of positive integers. */
export function checkShape(call: string, shape: readonly number[]): void {
  if (!Array.isArray(shape) || shape.length === 0 || shape.some((n) => !Number.isInteger(n) || n < 1)) {
    throw invalid(call, `shape must be a non-empty list of positive integers, got ${JSON.stringify(shape)}.`);
  }
}

/** `[2, 3]`. */
export function formatShape(shape: readonly number[]): string {
  return `[${shape.join(", ")}]`;
}

/** True when the shapes are equal. */
export function sameShape(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((extent, i) => extent === b[i]);
}

/** A tensor of `data` (taken as is: the caller guarantees every value is representable). */
export function fromRounded(data: Float64Array, shape: readonly number[], dtype: Dtype): RefTensor {
  return Object.freeze({ shape: Object.freeze([...shape]), dtype, data });
}

/**
 * A tensor holding `values` (row-major), each rounded to `dtype` with {@link roundTo}. Throws
 * `TL_INVALID_CALL` for a bad shape or dtype or a value count that is not the shape's size.
 */
export function tensor(values: ArrayLike<number>, shape: readonly number[], dtype: Dtype): RefTensor {
  checkShape("tensor", shape);
  checkDtype("tensor", dtype);
  const size = sizeOf(shape);
  if (values.length !== size) {
    throw invalid("tensor", `${formatShape(shape)} holds ${size} elements, got ${values.length} values.`);
  }
  const data = new Float64Array(size);
  for (let i = 0; i < size; i++) data[i] = roundTo(dtype, values[i] as number);
  return fromRounded(data, shape, dtype);
}

/** `tl.full`: every element `roundTo(dtype, value)`. */
export function full(shape: readonly number[], value: number, dtype: Dtype): RefTensor {
  checkShape("full", shape);
  checkDtype("full", dtype);
  return fromRounded(new Float64Array(sizeOf(shape)).fill(roundTo(dtype, value)), shape, dtype);
}

/** `tl.zeros`. */
export function zeros(shape: readonly number[], dtype: Dtype): RefTensor {
  return full(shape, 0, dtype);
}

/** `tl.arange(start, end, dtype)`: `[end - start]`, element i `roundTo(dtype, start + i)`. */
export function arange(start: number, end: number, dtype: Dtype = "i32"): RefTensor {
  if (!Number.isInteger(start) || !Number.isInteger(end) || end <= start) {
    throw invalid("arange", `needs integers with end > start, got ${start} and ${end}.`);
  }
  return tensor(
    Array.from({ length: end - start }, (_, i) => start + i),
    [end - start],
    dtype,
  );
}

/** The row-major index (one entry per dimension) of flat element `flat` of `shape`. */
export function indexOf(shape: readonly number[], flat: number): number[] {
  const index = new Array<number>(shape.length);
  let rest = flat;
  for (let d = shape.length - 1; d >= 0; d--) {
    const extent = shape[d] as number;
    index[d] = rest % extent;
    rest = Math.floor(rest / extent);
  }
  return index;
}
