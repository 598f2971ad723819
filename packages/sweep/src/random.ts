/**
 * A seeded pseudo-random generator (mulberry32): 32 bits of state, a period of 2^32, uniform
 * doubles in [0, 1). Sweeps draw their random and Latin-hypercube points from it, never from
 * Math.random, so a design and its seed name the same points on every machine and Node version.
 */
export class SeededRandom {
  #state: number;

  constructor(seed: number) {
    this.#state = seed >>> 0;
  }

  /** The next double in [0, 1). */
  next(): number {
    this.#state = (this.#state + 0x6d2b79f5) >>> 0;
    let t = this.#state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  }

  /** A whole number in [0, n). */
  below(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** 0 .. n-1 in a random order (Fisher-Yates). */
  permutation(n: number): number[] {
    const order = Array.from({ length: n }, (_, index) => index);
    for (let index = n - 1; index > 0; index--) {
      const other = this.below(index + 1);
      [order[index], order[other]] = [order[other] as number, order[index] as number];
    }
    return order;
  }
}
