import { KbError } from "@kb/errors";
import { DTYPE_BYTES, type Dtype, isDtype, isFloatDtype, isNarrowFloatDtype } from "@kb/spec";
import {
  bf16BitsToF32,
  f16BitsToF32,
  f16ValueTable,
  f32ToBf16Bits,
  f32ToF16Bits,
  INTEGER_RANGE,
  type IntegerDtype,
  LITTLE_ENDIAN,
  unknownDtype,
} from "./convert.js";
import {
  type Elements,
  elementsOf,
  encodeBigInt,
  encodeInteger,
  isWideDtype,
  type RawElements,
} from "./elements.js";
import { decodeNarrowFloat, encodeNarrowFloat, narrowFloatValueTable } from "./narrow-float.js";
import { Xoshiro128StarStar } from "./random.js";
import { describeShape, formatShape, rowMajorStrides, shapeProblem } from "./shape.js";
import { bytesEqual } from "./storage.js";

/** Options of {@link Tensor.random}. */
export interface TensorRandomOptions {
  /** The generator's seed, an integer in [0, 2^32). Default 0. */
  readonly seed?: number;
  /** Smallest value. Default -1 for float dtypes, -8 for integer dtypes, 0 for `i1`. */
  readonly low?: number;
  /** Largest value (floats: the upper end of the interval; integers: included). Default 1 for floats, 8 for integers, 1 for `i1`. */
  readonly high?: number;
}

/**
 * A host tensor: a dense, row-major (C order), contiguous array of `dtype` elements stored
 * little-endian in a `Uint8Array` — the byte layout the simulated device memory uses, so
 * `bytes` can be copied to and from device memory as is. f16 and bf16 elements are stored as
 * their 16-bit patterns, i8 and i32 as two's complement, u32 as an unsigned word.
 *
 * Values go in and out as JS numbers: a number written to an element is rounded as
 * {@link roundToDtype} says (floats: nearest, ties to even, directly from the double; integers:
 * half to even, saturated, NaN → 0), and an element reads back as its exact value.
 *
 * **When to use**: the inputs and outputs of kernels on the host (the kernel API, the host
 * runtime, the phase-2 executor). For bulk work use {@link toFloat32Array} /
 * {@link toFloat64Array} and {@link Tensor.fromArray} rather than `get`/`set` per element.
 *
 * **Gotchas**: `reshape`, `reinterpret` and a constructor given `bytes` share storage with their
 * source (writes through one show in the other) — except when the bytes start at an offset that
 * is not a multiple of the element size, where they are copied into aligned storage so typed
 * arrays can view them. `clone()` always copies. Indices are never negative (no Python-style -1).
 */
export class Tensor {
  /** Dimensions, outermost first; `[]` for a scalar (one element). Frozen. */
  readonly shape: readonly number[];
  /** Element type. */
  readonly dtype: Dtype;
  /** Number of elements: the product of `shape`. */
  readonly size: number;
  /** Bytes of storage: `size * DTYPE_BYTES[dtype]`. */
  readonly nbytes: number;
  /** Row-major strides in elements (not bytes): the last dimension has stride 1. Frozen. */
  readonly strides: readonly number[];
  /** The storage, `nbytes` long, little-endian. */
  readonly bytes: Uint8Array;
  private readonly elements: Elements;

  /**
   * A tensor of `shape` and `dtype` over `bytes` (shared, not copied, unless misaligned; see the
   * class notes), or over new zeroed storage when `bytes` is omitted.
   *
   * Throws `TENSOR_INVALID` when `dtype` is not a {@link Dtype}, a dimension is not a
   * non-negative integer, or `bytes` is not a `Uint8Array` of exactly `nbytes` bytes.
   */
  constructor(shape: readonly number[], dtype: Dtype, bytes?: Uint8Array) {
    if (!LITTLE_ENDIAN) {
      throw new KbError(
        "TENSOR_INVALID",
        "@kb/tensor needs a little-endian platform: tensors view their little-endian bytes through typed arrays, which use the platform's byte order.",
      );
    }
    if (!isDtype(dtype)) {
      throw new KbError(
        "TENSOR_INVALID",
        `Tensor(${String(dtype)} ${describeShape(shape)}): ${unknownDtype(dtype).detail}`,
      );
    }
    const problem = shapeProblem(shape);
    if (problem !== undefined) {
      throw new KbError("TENSOR_INVALID", `Tensor(${dtype} ${describeShape(shape)}): shape ${problem}`);
    }
    const elementBytes = DTYPE_BYTES[dtype];
    let size = 1;
    for (const dim of shape) size *= dim;
    const nbytes = size * elementBytes;
    let storage: Uint8Array;
    if (bytes === undefined) {
      storage = new Uint8Array(nbytes);
    } else if (!(bytes instanceof Uint8Array)) {
      throw new KbError(
        "TENSOR_INVALID",
        `Tensor(${dtype} ${formatShape(shape)}): bytes must be a Uint8Array, got ${Object.prototype.toString.call(bytes)}.`,
      );
    } else if (bytes.byteLength !== nbytes) {
      throw new KbError(
        "TENSOR_INVALID",
        `Tensor(${dtype} ${formatShape(shape)}) needs ${nbytes} bytes (${size} elements of ${elementBytes}), got ${bytes.byteLength}.`,
      );
    } else if (bytes.byteOffset % elementBytes !== 0) {
      storage = new Uint8Array(bytes); // a copy at offset 0: typed arrays need aligned views
    } else {
      storage = new Uint8Array(bytes.buffer, bytes.byteOffset, nbytes); // a plain Uint8Array, even for a Buffer
    }
    this.shape = Object.freeze(shape.slice());
    this.dtype = dtype;
    this.size = size;
    this.nbytes = nbytes;
    this.strides = Object.freeze(rowMajorStrides(shape));
    this.bytes = storage;
    this.elements = elementsOf(dtype, this.bytes, size);
  }

  /** A zero-filled tensor (every dtype's zero is all-zero bytes). Throws as the constructor does. */
  static zeros(shape: readonly number[], dtype: Dtype): Tensor {
    return new Tensor(shape, dtype);
  }

  /**
   * A tensor with every element `value`, rounded to `dtype` once; a BigInt `value` (an integer
   * dtype only) is stored exactly. Throws as the constructor does, and `TENSOR_INVALID` for a
   * BigInt the dtype cannot hold.
   */
  static full(shape: readonly number[], value: number | bigint, dtype: Dtype): Tensor {
    const tensor = new Tensor(shape, dtype);
    if (typeof value === "number") {
      tensor.setFlatUnchecked(0, value, true);
      return tensor;
    }
    const stored = isFloatDtype(dtype) ? undefined : encodeBigInt(value, dtype as IntegerDtype);
    if (stored === undefined) {
      throw new KbError(
        "TENSOR_INVALID",
        `Tensor.full(${dtype} ${formatShape(shape)}): ${dtype} cannot hold ${value}.`,
      );
    }
    (tensor.elements as RawElements).fill(stored);
    return tensor;
  }

  /**
   * A tensor of `shape` holding `values` in row-major order, each rounded to `dtype` as
   * {@link roundToDtype} says.
   *
   * Throws `TENSOR_INVALID` when `values.length` is not the shape's element count, or as the
   * constructor does.
   */
  static fromArray(values: ArrayLike<number>, shape: readonly number[], dtype: Dtype): Tensor {
    const tensor = new Tensor(shape, dtype);
    if (values.length !== tensor.size) {
      throw new KbError(
        "TENSOR_INVALID",
        `Tensor.fromArray: ${tensor} holds ${tensor.size} elements, got ${values.length} values.`,
      );
    }
    tensor.encodeFrom(values);
    return tensor;
  }

  /**
   * A tensor of deterministic pseudo-random values: the same arguments give the same bytes on
   * every platform and run (no `Math.random`).
   *
   * The generator is xoshiro128** seeded through splitmix32 (see the README); elements are filled
   * in row-major order.
   * - Float dtypes: element = `low + (high - low) * u` with `u = next() / 2^32` in [0, 1), then
   *   rounded to the dtype (so it may round up to `high`). One draw per element.
   * - Integer dtypes: uniform integers in [`low`, `high`], both included, without modulo bias
   *   (a draw from the incomplete last block of `high - low + 1` values is redrawn).
   *
   * Throws `TENSOR_INVALID` for a seed that is not an integer in [0, 2^32), a `low` above `high`,
   * non-finite bounds, or integer bounds that are not integers in the dtype's range.
   */
  static random(shape: readonly number[], dtype: Dtype, options: TensorRandomOptions = {}): Tensor {
    const tensor = new Tensor(shape, dtype);
    const seed = options.seed ?? 0;
    if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) {
      throw new KbError(
        "TENSOR_INVALID",
        `Tensor.random(${dtype} ${formatShape(shape)}): seed must be an integer in [0, 2^32), got ${seed}.`,
      );
    }
    const float = isFloatDtype(dtype);
    const bool = dtype === "i1";
    const low = options.low ?? (float ? -1 : bool ? 0 : -8);
    const high = options.high ?? (float ? 1 : bool ? 1 : 8);
    const where = `Tensor.random(${dtype} ${formatShape(shape)})`;
    if (!Number.isFinite(low) || !Number.isFinite(high) || !(low <= high) || !Number.isFinite(high - low)) {
      throw new KbError(
        "TENSOR_INVALID",
        `${where}: expected finite bounds with low <= high, got low ${low} and high ${high}.`,
      );
    }
    const generator = new Xoshiro128StarStar(seed);
    if (float) {
      const span = high - low;
      const elements = tensor.elements as Float32Array | Uint16Array;
      const size = tensor.size;
      if (dtype === "f32") {
        for (let i = 0; i < size; i++) elements[i] = low + span * generator.nextUnit();
      } else if (isNarrowFloatDtype(dtype)) {
        for (let i = 0; i < size; i++)
          elements[i] = encodeNarrowFloat(low + span * generator.nextUnit(), dtype);
      } else {
        const encode = dtype === "f16" ? f32ToF16Bits : f32ToBf16Bits;
        for (let i = 0; i < size; i++) elements[i] = encode(low + span * generator.nextUnit());
      }
      return tensor;
    }
    const [min, max] = INTEGER_RANGE[dtype as IntegerDtype];
    const count = high - low + 1;
    if (!Number.isInteger(low) || !Number.isInteger(high) || low < min || high > max || count > 2 ** 32) {
      throw new KbError(
        "TENSOR_INVALID",
        `${where}: expected integer bounds in [${min}, ${max}]${isWideDtype(dtype) ? " at most 2^32 apart" : ""}, got low ${low} and high ${high}.`,
      );
    }
    const elements = tensor.elements as RawElements;
    const wide = isWideDtype(dtype);
    for (let i = 0; i < tensor.size; i++) {
      const value = low + generator.nextBelow(count);
      elements[i] = wide ? BigInt(value) : value;
    }
    return tensor;
  }

  /** Rank: the number of dimensions. */
  get rank(): number {
    return this.shape.length;
  }

  /**
   * The value at `index` (one integer per dimension, each in [0, dim)), decoded to a number.
   * Throws `TENSOR_INVALID` naming the index and the shape when the count or a value is wrong.
   */
  get(...index: number[]): number {
    return this.readElement(this.offsetOf(index));
  }

  /**
   * Stores `value` at `index`, rounded to the dtype as {@link roundToDtype} says. Throws as
   * {@link get} does.
   */
  set(index: readonly number[], value: number): void {
    this.setFlatUnchecked(this.offsetOf(index), value, false);
  }

  /** The value of element `i` in row-major order, `i` an integer in [0, size). Throws `TENSOR_INVALID` otherwise. */
  getFlat(i: number): number {
    this.checkFlat(i);
    return this.readElement(i);
  }

  /** Stores `value` (rounded to the dtype) at row-major element `i`. Throws as {@link getFlat} does. */
  setFlat(i: number, value: number): void {
    this.checkFlat(i);
    this.setFlatUnchecked(i, value, false);
  }

  /**
   * Every element decoded, in row-major order, in a new array (exact for every dtype but the
   * 64-bit integers, whose values beyond ±2^53 read as the nearest double).
   */
  toFloat64Array(): Float64Array {
    const size = this.size;
    const out = new Float64Array(size);
    const elements = this.elements;
    if (elements instanceof BigInt64Array || elements instanceof BigUint64Array) {
      for (let i = 0; i < size; i++) out[i] = Number(elements[i]!);
    } else if (this.dtype === "f16") {
      const table = f16ValueTable();
      for (let i = 0; i < size; i++) out[i] = table[elements[i]!]!;
    } else if (this.dtype === "bf16") {
      // Widen a chunk to binary32 bits, then read it as numbers: no per-element scratch round trip.
      for (let start = 0; start < size; start += CHUNK) {
        const end = Math.min(size, start + CHUNK);
        for (let i = start; i < end; i++) chunkBits[i - start] = elements[i]! << 16;
        for (let i = start; i < end; i++) out[i] = chunkValues[i - start]!;
      }
    } else if (isNarrowFloatDtype(this.dtype)) {
      const table = narrowFloatValueTable(this.dtype);
      for (let i = 0; i < size; i++) out[i] = table[elements[i]!]!;
    } else {
      for (let i = 0; i < size; i++) out[i] = elements[i]!; // faster than out.set(elements) in V8
    }
    return out;
  }

  /**
   * Every element as binary32, in row-major order, in a new array. Exact for the float dtypes and
   * the narrow integers; i32 values beyond ±2^24 are rounded to the nearest binary32 (ties to even).
   */
  toFloat32Array(): Float32Array {
    const out = new Float32Array(this.size);
    const elements = this.elements;
    if (elements instanceof BigInt64Array || elements instanceof BigUint64Array) {
      out.set(this.toFloat64Array());
    } else if (this.dtype === "f16") {
      const table = f16ValueTable();
      for (let i = 0; i < out.length; i++) out[i] = table[elements[i]!]!;
    } else if (this.dtype === "bf16") {
      const outBits = new Uint32Array(out.buffer);
      for (let i = 0; i < out.length; i++) outBits[i] = elements[i]! << 16;
    } else if (isNarrowFloatDtype(this.dtype)) {
      const table = narrowFloatValueTable(this.dtype);
      for (let i = 0; i < out.length; i++) out[i] = table[elements[i]!]!;
    } else {
      out.set(elements);
    }
    return out;
  }

  /**
   * The same bytes read as `dtype` (no conversion), sharing storage. The last dimension is scaled
   * by the ratio of the element sizes: f32 `[2, 3]` becomes i8 `[2, 12]`, i8 `[4, 8]` becomes
   * f16 `[4, 4]`.
   *
   * Throws `TENSOR_INVALID` when the last dimension's bytes are not a multiple of the new element
   * size, or for a 0-d tensor and a dtype of another size (reshape it to `[1]` first).
   */
  reinterpret(dtype: Dtype): Tensor {
    if (!isDtype(dtype))
      throw new KbError("TENSOR_INVALID", `${this}.reinterpret: ${unknownDtype(dtype).detail}`);
    const from = DTYPE_BYTES[this.dtype];
    const to = DTYPE_BYTES[dtype];
    if (from === to) return new Tensor(this.shape, dtype, this.bytes);
    if (this.shape.length === 0) {
      throw new KbError(
        "TENSOR_INVALID",
        `${this}.reinterpret(${dtype}): a 0-d tensor's ${from} bytes do not make ${to}-byte elements; reshape it to [1] first.`,
      );
    }
    const lastAxis = this.shape.length - 1;
    const lastBytes = this.shape[lastAxis]! * from;
    if (lastBytes % to !== 0) {
      throw new KbError(
        "TENSOR_INVALID",
        `${this}.reinterpret(${dtype}): the last dimension holds ${lastBytes} bytes, not a multiple of ${dtype}'s ${to}.`,
      );
    }
    const shape = this.shape.slice();
    shape[lastAxis] = lastBytes / to;
    return new Tensor(shape, dtype, this.bytes);
  }

  /**
   * The same elements viewed with another shape of the same size (storage shared).
   * Throws `TENSOR_INVALID` when `shape` is invalid or its size differs.
   */
  reshape(shape: readonly number[]): Tensor {
    const problem = shapeProblem(shape);
    if (problem !== undefined) {
      throw new KbError("TENSOR_INVALID", `${this}.reshape: shape ${describeShape(shape)} ${problem}`);
    }
    let size = 1;
    for (const dim of shape) size *= dim;
    if (size !== this.size) {
      throw new KbError(
        "TENSOR_INVALID",
        `${this}.reshape(${formatShape(shape)}): the new shape has ${size} elements, the tensor ${this.size}.`,
      );
    }
    return new Tensor(shape, this.dtype, this.bytes);
  }

  /** A copy with its own storage. */
  clone(): Tensor {
    return new Tensor(this.shape, this.dtype, this.bytes.slice());
  }

  /**
   * True when `other` is a tensor of the same shape and dtype with the same bytes (so NaNs with
   * equal bits are equal, and 0 and -0 are not).
   */
  equals(other: Tensor): boolean {
    if (
      !(other instanceof Tensor) ||
      other.dtype !== this.dtype ||
      other.shape.length !== this.shape.length
    ) {
      return false;
    }
    for (let axis = 0; axis < this.shape.length; axis++) {
      if (other.shape[axis] !== this.shape[axis]) return false;
    }
    return bytesEqual(this.bytes, other.bytes);
  }

  /** A short summary: `Tensor(f16 [2, 3])`. */
  toString(): string {
    return `Tensor(${this.dtype} ${formatShape(this.shape)})`;
  }

  /** The flat offset of `index`, or `TENSOR_INVALID` naming the index and the shape. */
  private offsetOf(index: readonly number[]): number {
    const shape = this.shape;
    if (index.length !== shape.length) {
      throw new KbError(
        "TENSOR_INVALID",
        `${this}: index ${formatShape(index)} has ${index.length} ${index.length === 1 ? "entry" : "entries"}, expected ${shape.length} (one per dimension of ${formatShape(shape)}).`,
      );
    }
    const strides = this.strides;
    let offset = 0;
    for (let axis = 0; axis < shape.length; axis++) {
      const i = index[axis]!;
      const dim = shape[axis]!;
      if (!Number.isInteger(i) || i < 0 || i >= dim) {
        throw new KbError(
          "TENSOR_INVALID",
          `${this}: index ${formatShape(index)} is out of range for shape ${formatShape(shape)}: entry ${axis} must be an integer in [0, ${dim}), got ${i}.`,
        );
      }
      offset += i * strides[axis]!;
    }
    return offset;
  }

  private checkFlat(i: number): void {
    if (!Number.isInteger(i) || i < 0 || i >= this.size) {
      throw new KbError(
        "TENSOR_INVALID",
        `${this}: flat index must be an integer in [0, ${this.size}), got ${i}.`,
      );
    }
  }

  private readElement(offset: number): number {
    const raw = this.elements[offset]!;
    if (typeof raw === "bigint") return Number(raw);
    if (this.dtype === "f16") return f16BitsToF32(raw);
    if (this.dtype === "bf16") return bf16BitsToF32(raw);
    if (isNarrowFloatDtype(this.dtype)) return decodeNarrowFloat(raw, this.dtype);
    return raw;
  }

  /** Encodes `value` at `offset` (in range); `fill` stores it at every element instead. */
  private setFlatUnchecked(offset: number, value: number, fill: boolean): void {
    const dtype = this.dtype;
    const raw =
      dtype === "f32"
        ? value // the Float32Array store rounds to nearest, ties to even
        : dtype === "f16"
          ? f32ToF16Bits(value)
          : dtype === "bf16"
            ? f32ToBf16Bits(value)
            : isNarrowFloatDtype(dtype)
              ? encodeNarrowFloat(value, dtype)
              : encodeInteger(value, dtype);
    const elements = this.elements as RawElements;
    if (fill) elements.fill(raw);
    else elements[offset] = raw;
  }

  private encodeFrom(values: ArrayLike<number>): void {
    const size = this.size;
    const dtype = this.dtype;
    switch (dtype) {
      case "f32":
        (this.elements as Float32Array).set(values);
        break;
      case "f16":
      case "bf16": {
        const elements = this.elements as Uint16Array;
        const encode = dtype === "f16" ? f32ToF16Bits : f32ToBf16Bits;
        for (let i = 0; i < size; i++) elements[i] = encode(values[i]!);
        break;
      }
      case "f8e4m3":
      case "f8e5m2":
      case "f4e2m1": {
        const elements = this.elements as Uint8Array;
        for (let i = 0; i < size; i++) elements[i] = encodeNarrowFloat(values[i]!, dtype);
        break;
      }
      default: {
        const elements = this.elements as RawElements;
        for (let i = 0; i < size; i++) elements[i] = encodeInteger(values[i]!, dtype);
      }
    }
  }
}

/** Elements per chunk of the bf16 decode in `toFloat64Array`. */
const CHUNK = 4096;
const chunkValues = new Float32Array(CHUNK);
const chunkBits = new Uint32Array(chunkValues.buffer);
