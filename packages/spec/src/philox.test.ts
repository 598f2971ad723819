import { describe, expect, it } from "vitest";
import { philox4x32, rand, randint, randint4x, randn, uniformFloat } from "./philox.js";

const hex = (words: readonly number[]) => words.map((w) => w.toString(16).padStart(8, "0")).join(" ");

/**
 * A second Philox written from Triton's python/triton/language/random.py with BigInt products
 * (`philox_impl`: c0 = umulhi(B, c2) ^ c1 ^ k0, c2 = umulhi(A, c0) ^ c3 ^ k1, c1 = B·c2, c3 = A·c0,
 * then k0 += 0x9E3779B9, k1 += 0xBB67AE85), and `randint4x`'s counter (offset, 0, 0, 0) with the
 * seed's low and high words as the key.
 */
function referencePhilox(seed: bigint, offset: bigint): bigint[] {
  const M = (1n << 32n) - 1n;
  let [c0, c1, c2, c3] = [offset & M, 0n, 0n, 0n];
  const s = BigInt.asUintN(64, seed);
  let [k0, k1] = [s & M, s >> 32n];
  for (let round = 0; round < 10; round++) {
    const pb = 0xcd9e8d57n * c2;
    const pa = 0xd2511f53n * c0;
    [c0, c1, c2, c3] = [(pb >> 32n) ^ c1 ^ k0, pb & M, (pa >> 32n) ^ c3 ^ k1, pa & M];
    k0 = (k0 + 0x9e3779b9n) & M;
    k1 = (k1 + 0xbb67ae85n) & M;
  }
  return [c0, c1, c2, c3];
}

describe("Philox 4x32-10 (Triton's tl.randint / tl.rand / tl.randn)", () => {
  it("matches Random123's published known-answer vectors for philox4x32_10", () => {
    // Random123 kat_vectors: counter, key -> output.
    expect(hex(philox4x32([0, 0, 0, 0], [0, 0]))).toBe("6627e8d5 e169c58d bc57ac4c 9b00dbd8");
    const ones = 0xffffffff;
    expect(hex(philox4x32([ones, ones, ones, ones], [ones, ones]))).toBe(
      "408f276d 41c83b0e a20bc7c6 6d5451fd",
    );
    expect(hex(philox4x32([0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344], [0xa4093822, 0x299f31d0]))).toBe(
      "d16cfe09 94fdcceb 5001e420 24126ea1",
    );
  });

  it("equals a BigInt transcription of Triton's random.py for seeds and offsets of every sign", () => {
    for (const seed of [0, 1, 123, -1, 2 ** 31, 2 ** 40 + 7, -123456789]) {
      for (const offset of [0, 1, 2, 1023, -1, 2 ** 31 - 1, 0x80000000]) {
        const expected = referencePhilox(BigInt(seed), BigInt(offset)).map(Number);
        expect(randint4x(seed, offset), `seed ${seed}, offset ${offset}`).toEqual(expected);
      }
    }
  });

  it("converts a word to [0, 1) as Triton's uint_to_uniform_float, in f32", () => {
    const scale = Math.fround(4.6566127342e-10);
    expect(uniformFloat(0)).toBe(0);
    // 2^31 - 1 rounds to 2^31 in f32; times the scale stays below 1.
    expect(uniformFloat(0x7fffffff)).toBe(Math.fround(2 ** 31 * scale));
    expect(uniformFloat(0x7fffffff)).toBeLessThan(1);
    // A word with the top bit set is x = word - 2^32 < 0, mapped to -x - 1: 0xffffffff -> 0.
    expect(uniformFloat(0xffffffff)).toBe(0);
    expect(uniformFloat(0x80000000)).toBe(Math.fround(Math.fround(2147483647) * scale));
    // rand is that of randint's word; randint is randint4x's first word.
    const word = referencePhilox(42n, 7n)[0] as bigint;
    expect(randint(42, 7)).toBe(Number(word));
    const x = Number(BigInt.asIntN(32, word));
    expect(rand(42, 7)).toBe(Math.fround(Math.fround(x < 0 ? -x - 1 : x) * scale));
  });

  it("gives randn by Box-Muller of the first two words, each step in f32", () => {
    const [w0, w1] = referencePhilox(5n, 3n).map(Number) as [number, number];
    const u1 = Math.max(Math.fround(1e-7), uniformFloat(w0));
    const u2 = uniformFloat(w1);
    const r = Math.sqrt(-2 * Math.log(u1));
    // Within f32 rounding of the f64 formula.
    expect(randn(5, 3)).toBeCloseTo(r * Math.cos(2 * Math.PI * u2), 5);
    // Over 4096 offsets: mean near 0, variance near 1 (4 standard errors: 0.0625 and 0.088).
    let sum = 0;
    let squares = 0;
    for (let i = 0; i < 4096; i++) {
      const n = randn(2026, i);
      sum += n;
      squares += n * n;
    }
    expect(Math.abs(sum / 4096)).toBeLessThan(0.0625);
    expect(Math.abs(squares / 4096 - 1)).toBeLessThan(0.088);
  });
});
