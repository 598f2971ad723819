/**
 * A set of byte ranges `[start, end)`: the device bytes whose values phase 1 does not know
 * (compute results, copies of them; ADR-0020 D3). Kept as sorted, disjoint, non-adjacent
 * intervals in two parallel arrays, so {@link overlaps} is a binary search, O(log n); {@link add}
 * and {@link clear} search the same way and then splice, O(log n + k) plus the array move.
 *
 * **When to use**: `Simulator.kernelMemory()` keeps one: `markPending` adds, `write` clears,
 * `isPending` asks `overlaps`. An empty set answers every call in O(1), so a run whose kernels
 * compute nothing pays nothing.
 *
 * **Gotchas**: ranges are half-open; an empty range (`end <= start`) is ignored by every method
 * (it overlaps nothing). Bounds are not checked: they are device addresses, integers below 2^53.
 */
export class PendingRanges {
  /** Starts of the intervals, ascending. */
  private readonly starts: number[] = [];
  /** Ends (exclusive) of the intervals: `ends[i] < starts[i + 1]` (disjoint, never adjacent). */
  private readonly ends: number[] = [];

  /** Number of disjoint intervals held (adjacent and overlapping additions merge). */
  get size(): number {
    return this.starts.length;
  }

  /** Total bytes held. O(n). */
  get bytes(): number {
    let total = 0;
    for (let i = 0; i < this.starts.length; i++)
      total += (this.ends[i] as number) - (this.starts[i] as number);
    return total;
  }

  /** Adds `[start, end)`, merging with the intervals it overlaps or touches. */
  add(start: number, end: number): void {
    if (end <= start) return;
    // First interval that ends at or after `start` (touching merges), last that starts at or before `end`.
    const first = this.firstEndingAtOrAfter(start);
    let last = first;
    while (last < this.starts.length && (this.starts[last] as number) <= end) last++;
    if (first === last) {
      this.starts.splice(first, 0, start);
      this.ends.splice(first, 0, end);
      return;
    }
    const mergedStart = Math.min(start, this.starts[first] as number);
    const mergedEnd = Math.max(end, this.ends[last - 1] as number);
    this.starts.splice(first, last - first, mergedStart);
    this.ends.splice(first, last - first, mergedEnd);
  }

  /** Removes `[start, end)`: intervals it covers go, intervals it cuts are trimmed or split. */
  clear(start: number, end: number): void {
    if (end <= start || this.starts.length === 0) return;
    // First interval that ends after `start` (one ending exactly at `start` is untouched).
    const first = this.firstEndingAfter(start);
    let last = first;
    while (last < this.starts.length && (this.starts[last] as number) < end) last++;
    if (first === last) return;
    const keepStarts: number[] = [];
    const keepEnds: number[] = [];
    const headStart = this.starts[first] as number;
    if (headStart < start) {
      keepStarts.push(headStart);
      keepEnds.push(start);
    }
    const tailEnd = this.ends[last - 1] as number;
    if (tailEnd > end) {
      keepStarts.push(end);
      keepEnds.push(tailEnd);
    }
    this.starts.splice(first, last - first, ...keepStarts);
    this.ends.splice(first, last - first, ...keepEnds);
  }

  /** True when any byte of `[start, end)` is in the set. O(log n). */
  overlaps(start: number, end: number): boolean {
    if (end <= start || this.starts.length === 0) return false;
    const index = this.firstEndingAfter(start);
    return index < this.starts.length && (this.starts[index] as number) < end;
  }

  /**
   * The interval holding `address`, as `[start, end)` of the merged set, or null when `address`
   * is not in it. O(log n).
   */
  intervalAt(address: number): [number, number] | null {
    const index = this.firstEndingAfter(address);
    const start = this.starts[index];
    return start !== undefined && start <= address ? [start, this.ends[index] as number] : null;
  }

  /** Empties the set. */
  reset(): void {
    this.starts.length = 0;
    this.ends.length = 0;
  }

  /** The intervals in ascending order, as `[start, end)` pairs (a copy; for tests and messages). */
  toArray(): [number, number][] {
    return this.starts.map((start, i) => [start, this.ends[i] as number]);
  }

  /** Index of the first interval whose end is > `address` (or `size`). */
  private firstEndingAfter(address: number): number {
    let low = 0;
    let high = this.ends.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if ((this.ends[middle] as number) > address) high = middle;
      else low = middle + 1;
    }
    return low;
  }

  /** Index of the first interval whose end is >= `address` (or `size`). */
  private firstEndingAtOrAfter(address: number): number {
    let low = 0;
    let high = this.ends.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if ((this.ends[middle] as number) >= address) high = middle;
      else low = middle + 1;
    }
    return low;
  }
}
