/** The search helpers of the region router (region-router.ts): the heap and per-search scratch of its quotient-graph and in-region searches (NODE_LIMIT is search-queue.ts's). @internal */

/**
 * A search over the quotient graph: entries `(latency, hops * NODE_LIMIT + node)` in a binary
 * min-heap, lexicographic.
 */
export class PairHeap {
  private latencies = new Float64Array(64);
  private entries = new Float64Array(64);
  private size = 0;
  /** The popped entry's latency and `hops * NODE_LIMIT + node`. */
  latency = 0;
  entry = 0;

  clear(): void {
    this.size = 0;
  }

  push(latency: number, entry: number): void {
    if (this.size === this.latencies.length) {
      const latencies = new Float64Array(this.size * 2);
      latencies.set(this.latencies);
      this.latencies = latencies;
      const entries = new Float64Array(this.size * 2);
      entries.set(this.entries);
      this.entries = entries;
    }
    const { latencies, entries } = this;
    let position = this.size++;
    while (position > 0) {
      const parent = (position - 1) >> 1;
      const parentLatency = latencies[parent] as number;
      if (parentLatency < latency || (parentLatency === latency && (entries[parent] as number) <= entry))
        break;
      latencies[position] = parentLatency;
      entries[position] = entries[parent] as number;
      position = parent;
    }
    latencies[position] = latency;
    entries[position] = entry;
  }

  /** Pops the least entry into `latency` / `entry`; false when empty. */
  pop(): boolean {
    if (this.size === 0) return false;
    const { latencies, entries } = this;
    this.latency = latencies[0] as number;
    this.entry = entries[0] as number;
    const size = --this.size;
    if (size > 0) {
      const lastLatency = latencies[size] as number;
      const lastEntry = entries[size] as number;
      let position = 0;
      for (;;) {
        let child = 2 * position + 1;
        if (child >= size) break;
        if (child + 1 < size) {
          const a = latencies[child] as number;
          const b = latencies[child + 1] as number;
          if (b < a || (b === a && (entries[child + 1] as number) < (entries[child] as number))) child++;
        }
        const childLatency = latencies[child] as number;
        if (
          lastLatency < childLatency ||
          (lastLatency === childLatency && lastEntry <= (entries[child] as number))
        )
          break;
        latencies[position] = childLatency;
        entries[position] = entries[child] as number;
        position = child;
      }
      latencies[position] = lastLatency;
      entries[position] = lastEntry;
    }
    return true;
  }
}

/** The state of one kind of search, reset by a new stamp rather than by fills. */
export class SearchScratch {
  readonly seen: Int32Array;
  readonly settled: Int32Array;
  readonly dist: Float64Array;
  readonly hops: Int32Array;
  readonly heap = new PairHeap();
  stamp = 0;

  constructor(nodeCount: number) {
    this.seen = new Int32Array(nodeCount);
    this.settled = new Int32Array(nodeCount);
    this.dist = new Float64Array(nodeCount);
    this.hops = new Int32Array(nodeCount);
  }

  /** Starts a search from `root`; returns its stamp. */
  start(root: number): number {
    const stamp = ++this.stamp;
    this.heap.clear();
    this.seen[root] = stamp;
    this.dist[root] = 0;
    this.hops[root] = 0;
    this.heap.push(0, root);
    return stamp;
  }
}
