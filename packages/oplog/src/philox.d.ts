/**
 * Philox 4x32 of the counter (c0, c1, c2, c3) with the key (k0, k1), `rounds` rounds (10 by
 * default), as four unsigned 32-bit words. A round: c0' = hi(B·c2) ^ c1 ^ k0, c1' = lo(B·c2),
 * c2' = hi(A·c0) ^ c3 ^ k1, c3' = lo(A·c0); the key then grows by (KEY_A, KEY_B).
 */
export declare function philox4x32(counter: readonly [number, number, number, number], key: readonly [number, number], rounds?: number): [number, number, number, number];
/**
 * Triton's key of an integer seed: the seed as an unsigned 64-bit integer (two's complement for
 * a negative seed), its low word k0 and high word k1. A fractional seed is truncated first.
 */
export declare function philoxKey(seed: number): [number, number];
/** Triton's `randint4x(seed, offset)`: Philox of the counter (offset as u32, 0, 0, 0). */
export declare function randint4x(seed: number, offset: number): [number, number, number, number];
/**
 * Triton's `uint_to_uniform_float` of a 32-bit word: the word as an i32 `x`, `-x - 1` when
 * negative, converted to f32 and multiplied by the scale in f32: a float in [0, 1).
 */
export declare function uniformFloat(word: number): number;
/** Triton's `randint(seed, offset)`: the first word of `randint4x`, an unsigned 32-bit integer. */
export declare function randint(seed: number, offset: number): number;
/** Triton's `rand(seed, offset)`: `uniformFloat` of `randint`, an f32 in [0, 1). */
export declare function rand(seed: number, offset: number): number;
/**
 * Triton's `randn(seed, offset)`: Box-Muller of the first two words' uniforms, each step in f32:
 * u1 = max(1e-7, uniform(w0)), u2 = uniform(w1), r = sqrt(-2 · log(u1)), result r · cos(2π · u2).
 * `log`, `sqrt` and `cos` are the platform's (a GPU's approximations may differ in the last bit).
 */
export declare function randn(seed: number, offset: number): number;
