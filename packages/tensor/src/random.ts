/**
 * One step of splitmix32: adds the golden-ratio increment 0x9e3779b9 to `state` (mod 2^32) and
 * returns the new state and murmur3's fmix32 of it. Used only to spread a 32-bit seed over the
 * 128-bit state of {@link Xoshiro128StarStar}.
 */
export function splitmix32(state: number): { readonly state: number; readonly output: number } {
  const next = (state + 0x9e3779b9) | 0;
  let z = next;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
  return { state: next >>> 0, output: (z ^ (z >>> 16)) >>> 0 };
}

/**
 * The xoshiro128** generator (Blackman and Vigna, 2018): 32-bit outputs, period 2^128 - 1,
 * seeded with four successive splitmix32 outputs starting from the state `seed` (an integer in
 * [0, 2^32)). Deterministic across platforms: only 32-bit integer arithmetic.
 */
export class Xoshiro128StarStar {
  // The state lives in a typed array: int32 values above 2^30 stored in object fields would be
  // boxed as heap numbers (V8's small integers are 31-bit), one allocation per step.
  private readonly state = new Int32Array(4);

  constructor(seed: number) {
    let step = splitmix32(seed >>> 0);
    for (let i = 0; i < 4; i++) {
      this.state[i] = step.output;
      step = splitmix32(step.state);
    }
  }

  /** The next output, an integer in [0, 2^32). */
  nextUint32(): number {
    const state = this.state;
    const s0 = state[0]!;
    const s1 = state[1]!;
    const s2 = state[2]! ^ s0;
    const s3 = state[3]! ^ s1;
    const times5 = Math.imul(s1, 5);
    const result = Math.imul((times5 << 7) | (times5 >>> 25), 9) >>> 0;
    state[0] = s0 ^ s3;
    state[1] = s1 ^ s2;
    state[2] = s2 ^ (s1 << 9);
    state[3] = (s3 << 11) | (s3 >>> 21);
    return result;
  }

  /** The next output divided by 2^32: a number in [0, 1) with 32 random bits. */
  nextUnit(): number {
    return this.nextUint32() * 2 ** -32;
  }

  /**
   * A uniform integer in [0, `count`) for 1 <= `count` <= 2^32, without modulo bias: outputs from
   * the incomplete last block of `count` values are drawn again.
   */
  nextBelow(count: number): number {
    const limit = 2 ** 32 - (2 ** 32 % count);
    let value = this.nextUint32();
    while (value >= limit) value = this.nextUint32();
    return value % count;
  }
}
