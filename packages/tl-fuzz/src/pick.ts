/** Value of `n` modulo `length` for any integer (the draw may be negative). */
export function pick(n: number, length: number): number {
  return ((Math.trunc(n) % length) + length) % length;
}

/** A shuffled `0 .. n - 1` (Fisher-Yates, drawing from `random`, values in [0, 1)). */
export function permutation(random: () => number, n: number): number[] {
  const perm = Array.from({ length: n }, (_, j) => j);
  for (let j = n - 1; j > 0; j--) {
    const swap = pick(random() * (j + 1), j + 1);
    [perm[j], perm[swap]] = [perm[swap] as number, perm[j] as number];
  }
  return perm;
}
