/** Value of `n` modulo `length` for any integer (the draw may be negative). */
export function pick(n: number, length: number): number {
  return ((Math.trunc(n) % length) + length) % length;
}
