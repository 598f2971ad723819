// Triton's random numbers (python/triton/language/random.py), bit for bit: Philox 4x32 with 10
// rounds (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC 2011; Random123's
// philox4x32_10) keyed by the seed, counting with the offset, and Triton's conversions of the
// first (and second) output word to a float. The math ops `randint`, `rand` and `randn` of the op
// table (math-ops.ts) are these functions of (seed, offset).

/** Philox's round multipliers and key increments (Random123's PHILOX_M4x32_0/1, PHILOX_W32_0/1). */
const ROUND_A = 0xd2511f53;
const ROUND_B = 0xcd9e8d57;
const KEY_A = 0x9e3779b9;
const KEY_B = 0xbb67ae85;

/** The high 32 bits of the 64-bit product of two unsigned 32-bit words. */
function mulhi(a: number, b: number): number {
  const aLow = a & 0xffff;
  const aHigh = a >>> 16;
  const bLow = b & 0xffff;
  const bHigh = b >>> 16;
  const low = aLow * bLow;
  const cross1 = aHigh * bLow;
  const cross2 = aLow * bHigh;
  // The carry into bit 32: the middle column's sum (< 3 · 2^16, exact).
  const middle = (low >>> 16) + (cross1 & 0xffff) + (cross2 & 0xffff);
  return (aHigh * bHigh + (cross1 >>> 16) + (cross2 >>> 16) + (middle >>> 16)) >>> 0;
}

/**
 * Philox 4x32 of the counter (c0, c1, c2, c3) with the key (k0, k1), `rounds` rounds (10 by
 * default), as four unsigned 32-bit words. A round: c0' = hi(B·c2) ^ c1 ^ k0, c1' = lo(B·c2),
 * c2' = hi(A·c0) ^ c3 ^ k1, c3' = lo(A·c0); the key then grows by (KEY_A, KEY_B).
 */
export function philox4x32(
  counter: readonly [number, number, number, number],
  key: readonly [number, number],
  rounds = 10,
): [number, number, number, number] {
  let [c0, c1, c2, c3] = counter.map((word) => word >>> 0) as [number, number, number, number];
  let [k0, k1] = key.map((word) => word >>> 0) as [number, number];
  for (let r = 0; r < rounds; r++) {
    const next0 = (mulhi(ROUND_B, c2) ^ c1 ^ k0) >>> 0;
    const next2 = (mulhi(ROUND_A, c0) ^ c3 ^ k1) >>> 0;
    c1 = Math.imul(ROUND_B, c2) >>> 0;
    c3 = Math.imul(ROUND_A, c0) >>> 0;
    c0 = next0;
    c2 = next2;
    k0 = (k0 + KEY_A) >>> 0;
    k1 = (k1 + KEY_B) >>> 0;
  }
  return [c0, c1, c2, c3];
}

// The key of the last seed asked for: kernels pass one seed for a whole tile.
let lastSeed = Number.NaN;
let lastKey: [number, number] = [0, 0];

/**
 * Triton's key of an integer seed: the seed as an unsigned 64-bit integer (two's complement for
 * a negative seed), its low word k0 and high word k1. A fractional seed is truncated first.
 */
export function philoxKey(seed: number): [number, number] {
  if (seed === lastSeed) return lastKey;
  const bits = BigInt.asUintN(64, BigInt(Number.isFinite(seed) ? Math.trunc(seed) : 0));
  lastKey = [Number(bits & 0xffffffffn), Number(bits >> 32n)];
  lastSeed = seed;
  return lastKey;
}

/** Triton's `randint4x(seed, offset)`: Philox of the counter (offset as u32, 0, 0, 0). */
export function randint4x(seed: number, offset: number): [number, number, number, number] {
  return philox4x32([offset >>> 0, 0, 0, 0], philoxKey(seed));
}

/** f32 of Triton's `uint_to_uniform_float` scale 4.6566127342e-10: the largest with (2^31 - 1) · scale < 1. */
const UNIFORM_SCALE = Math.fround(4.6566127342e-10);

/**
 * Triton's `uint_to_uniform_float` of a 32-bit word: the word as an i32 `x`, `-x - 1` when
 * negative, converted to f32 and multiplied by the scale in f32: a float in [0, 1).
 */
export function uniformFloat(word: number): number {
  const x = word | 0;
  return Math.fround(Math.fround(x < 0 ? ~x : x) * UNIFORM_SCALE);
}

/** Triton's `randint(seed, offset)`: the first word of `randint4x`, an unsigned 32-bit integer. */
export function randint(seed: number, offset: number): number {
  return randint4x(seed, offset)[0];
}

/** Triton's `rand(seed, offset)`: `uniformFloat` of `randint`, an f32 in [0, 1). */
export function rand(seed: number, offset: number): number {
  return uniformFloat(randint(seed, offset));
}

const F32_TWO_PI = Math.fround(6.283185307179586);
const F32_MIN_UNIFORM = Math.fround(1e-7);

/**
 * Triton's `randn(seed, offset)`: Box-Muller of the first two words' uniforms, each step in f32:
 * u1 = max(1e-7, uniform(w0)), u2 = uniform(w1), r = sqrt(-2 · log(u1)), result r · cos(2π · u2).
 * `log`, `sqrt` and `cos` are the platform's (a GPU's approximations may differ in the last bit).
 */
export function randn(seed: number, offset: number): number {
  const [w0, w1] = randint4x(seed, offset);
  const u1 = Math.max(F32_MIN_UNIFORM, uniformFloat(w0));
  const u2 = uniformFloat(w1);
  const theta = Math.fround(F32_TWO_PI * u2);
  const r = Math.fround(Math.sqrt(Math.fround(-2 * Math.fround(Math.log(u1)))));
  return Math.fround(r * Math.fround(Math.cos(theta)));
}
