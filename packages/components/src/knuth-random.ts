// Knuth's lagged-Fibonacci generator (TAOCP vol. 2, section 3.6, `rng.c`, 9th-printing version):
// the integer source of BookSim 2's `RandomInt`, reproduced so that `randperm` draws BookSim's own
// permutation from a seed.

const KK = 100;
const LL = 37;
const MM = 2 ** 30;
const TT = 70;
const QUALITY = 1009;
const modDiff = (x: number, y: number) => (x - y) & (MM - 1);

/**
 * `ran_start(seed)` then successive `ran_arr_next()`: integers in [0, 2^30), the sequence BookSim
 * 2's `RandomSeed(seed)` / `RandomIntLong()` give. `seed` is a whole number in [0, 2^30).
 */
export function knuthRandom(seed: number): () => number {
  const state = new Array<number>(KK).fill(0);
  const ranArray = (aa: number[], n: number) => {
    let j = 0;
    for (; j < KK; j++) aa[j] = state[j] as number;
    for (; j < n; j++) aa[j] = modDiff(aa[j - KK] as number, aa[j - LL] as number);
    let i = 0;
    for (; i < LL; i++, j++) state[i] = modDiff(aa[j - KK] as number, aa[j - LL] as number);
    for (; i < KK; i++, j++) state[i] = modDiff(aa[j - KK] as number, state[i - LL] as number);
  };
  const x = new Array<number>(KK + KK - 1).fill(0);
  let ss = (seed + 2) & (MM - 2);
  for (let j = 0; j < KK; j++) {
    x[j] = ss;
    ss *= 2;
    if (ss >= MM) ss -= MM - 2;
  }
  x[1] = (x[1] as number) + 1;
  for (let s = seed & (MM - 1), t = TT - 1; t > 0; ) {
    for (let j = KK - 1; j > 0; j--) {
      x[j + j] = x[j] as number;
      x[j + j - 1] = 0;
    }
    for (let j = KK + KK - 2; j >= KK; j--) {
      x[j - (KK - LL)] = modDiff(x[j - (KK - LL)] as number, x[j] as number);
      x[j - KK] = modDiff(x[j - KK] as number, x[j] as number);
    }
    if (s & 1) {
      for (let j = KK; j > 0; j--) x[j] = x[j - 1] as number;
      x[0] = x[KK] as number;
      x[LL] = modDiff(x[LL] as number, x[KK] as number);
    }
    if (s !== 0) s >>= 1;
    else t--;
  }
  for (let j = 0; j < LL; j++) state[j + KK - LL] = x[j] as number;
  for (let j = LL; j < KK; j++) state[j - LL] = x[j] as number;
  for (let j = 0; j < 10; j++) ranArray(x, KK + KK - 1);
  const buffer = new Array<number>(QUALITY).fill(0);
  let next = KK; // the buffer is used up: the first call fills it
  return () => {
    if (next >= KK) {
      ranArray(buffer, QUALITY);
      next = 0;
    }
    return buffer[next++] as number;
  };
}
