/** Queue entries are `hops * NODE_LIMIT + node`: exact below 2^52 with up to 2^26 nodes and hops. @internal */
export const NODE_LIMIT = 2 ** 26;

/**
 * The priority queue of a search: entries `hops * NODE_LIMIT + node` ordered by latency, then
 * hops (then node number). Paths in a topology share few distinct latencies (the 43235-node
 * 64-cube bench has 53 per search), so the queue keeps one bucket per latency, a min-heap of the
 * latencies, and serves a bucket in order of hops: its entries are sorted when it becomes
 * current, merged with those pushed at the current latency while it is served (over links of 0
 * ns from nodes without first-flit overhead), which arrive in nondecreasing hops. An entry whose
 * node has since improved stays in its bucket and is skipped by the search.
 */
/** @internal */
export class SearchQueue {
  /** Latency of the bucket being served (-1 before the first pop). */
  latency = -1;
  private readonly buckets = new Map<number, number[]>();
  private readonly latencies: number[] = [];
  private readonly pool: number[][] = [];
  private current = new Float64Array(1024);
  private currentHead = 0;
  private currentTail = 0;
  private readonly sameLatency: number[] = [];
  private sameLatencyHead = 0;

  push(node: number, latency: number, hops: number): void {
    const entry = hops * NODE_LIMIT + node;
    if (latency === this.latency) {
      this.sameLatency.push(entry);
      return;
    }
    let bucket = this.buckets.get(latency);
    if (bucket === undefined) {
      bucket = this.pool.pop() ?? [];
      this.buckets.set(latency, bucket);
      this.pushLatency(latency);
    }
    bucket.push(entry);
  }

  /** The least entry, or -1 when the queue is empty (which resets it for the next search). */
  pop(): number {
    for (;;) {
      const fromBucket =
        this.currentHead < this.currentTail
          ? (this.current[this.currentHead] as number)
          : Number.POSITIVE_INFINITY;
      const fromSame =
        this.sameLatencyHead < this.sameLatency.length
          ? (this.sameLatency[this.sameLatencyHead] as number)
          : Number.POSITIVE_INFINITY;
      if (fromBucket <= fromSame) {
        if (fromBucket !== Number.POSITIVE_INFINITY) {
          this.currentHead++;
          return fromBucket;
        }
      } else {
        this.sameLatencyHead++;
        return fromSame;
      }
      this.sameLatency.length = 0;
      this.sameLatencyHead = 0;
      if (this.latencies.length === 0) {
        this.latency = -1;
        return -1;
      }
      const latency = this.popLatency();
      const bucket = this.buckets.get(latency) as number[];
      this.buckets.delete(latency);
      if (this.current.length < bucket.length) this.current = new Float64Array(bucket.length * 2);
      this.current.set(bucket);
      this.current.subarray(0, bucket.length).sort();
      this.currentHead = 0;
      this.currentTail = bucket.length;
      bucket.length = 0;
      this.pool.push(bucket);
      this.latency = latency;
    }
  }

  private pushLatency(latency: number): void {
    const heap = this.latencies;
    let position = heap.length;
    heap.push(latency);
    while (position > 0) {
      const parent = (position - 1) >> 1;
      const above = heap[parent] as number;
      if (above <= latency) break;
      heap[position] = above;
      position = parent;
    }
    heap[position] = latency;
  }

  private popLatency(): number {
    const heap = this.latencies;
    const top = heap[0] as number;
    const last = heap.pop() as number;
    const size = heap.length;
    if (size > 0) {
      let position = 0;
      for (;;) {
        let child = 2 * position + 1;
        if (child >= size) break;
        if (child + 1 < size && (heap[child + 1] as number) < (heap[child] as number)) child++;
        const below = heap[child] as number;
        if (below >= last) break;
        heap[position] = below;
        position = child;
      }
      heap[position] = last;
    }
    return top;
  }
}
