// The element storage of a host tensor: the typed-array view of its bytes, and byte equality.
import type { Dtype } from "@kb/spec";

/** The typed-array view a tensor reads and writes its elements through (f16, bf16, fp8, fp4 as raw bits). */
export type Elements = Float32Array | Uint16Array | Int8Array | Int32Array | Uint8Array | Uint32Array;

/** The typed-array view of `bytes` (aligned, `size` elements of `dtype`). */
export function elementsOf(dtype: Dtype, bytes: Uint8Array, size: number): Elements {
  switch (dtype) {
    case "f32":
      return new Float32Array(bytes.buffer, bytes.byteOffset, size);
    case "f16":
    case "bf16":
      return new Uint16Array(bytes.buffer, bytes.byteOffset, size);
    case "i8":
      return new Int8Array(bytes.buffer, bytes.byteOffset, size);
    case "i32":
      return new Int32Array(bytes.buffer, bytes.byteOffset, size);
    case "i1":
    case "f8e4m3":
    case "f8e5m2":
    case "f4e2m1":
      return new Uint8Array(bytes.buffer, bytes.byteOffset, size);
    case "u32":
      return new Uint32Array(bytes.buffer, bytes.byteOffset, size);
  }
}

/** Byte-wise equality, four bytes at a time where both arrays allow it. */
export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.byteLength !== b.byteLength) return false;
  let start = 0;
  if (a.byteOffset % 4 === 0 && b.byteOffset % 4 === 0) {
    const words = a.byteLength >>> 2;
    const aWords = new Int32Array(a.buffer, a.byteOffset, words);
    const bWords = new Int32Array(b.buffer, b.byteOffset, words);
    for (let i = 0; i < words; i++) if (aWords[i] !== bWords[i]) return false;
    start = words << 2;
  }
  for (let i = start; i < a.byteLength; i++) if (a[i] !== b[i]) return false;
  return true;
}
