// Byte equality of host tensors (their typed-array views are in elements.ts).

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
