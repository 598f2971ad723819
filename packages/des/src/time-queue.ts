import type { Event } from "./event.js";

/**
 * The events due at one instant, as two FIFO queues (urgent, normal).
 *
 * SimPy orders the schedule by `(time, priority, insertion sequence)`. Events at one instant with
 * one priority are therefore served in insertion order, which a FIFO gives without storing or
 * comparing sequence numbers.
 * @internal
 */
export class Bucket {
  time = 0;
  // Each queue is an array used from `head` to `tail`; slots are overwritten, never truncated,
  // because resizing an array (`length = 0`) costs a runtime call per instant.
  urgent: (Event | null)[] = [];
  urgentHead = 0;
  urgentTail = 0;
  normal: (Event | null)[] = [];
  normalHead = 0;
  normalTail = 0;

  get size(): number {
    return this.urgentTail - this.urgentHead + this.normalTail - this.normalHead;
  }

  /** Empties the bucket (served slots were already cleared) and gives it a new instant. */
  reset(time: number): void {
    this.time = time;
    this.urgentHead = 0;
    this.urgentTail = 0;
    this.normalHead = 0;
    this.normalTail = 0;
  }

  /** The queued events in service order (diagnostics). */
  events(): Event[] {
    const out: Event[] = [];
    for (let i = this.urgentHead; i < this.urgentTail; i++) out.push(this.urgent[i] as Event);
    for (let i = this.normalHead; i < this.normalTail; i++) out.push(this.normal[i] as Event);
    return out;
  }
}

const RING_SLOTS = 1024;
const RING_MASK = RING_SLOTS - 1;

/**
 * A min-heap of distinct future instants, each with its {@link Bucket}.
 *
 * The simulator's load has few distinct timestamps and many events per timestamp, so the heap
 * holds instants rather than events: scheduling at an instant that already has a bucket is an
 * array lookup and a push, and the heap is touched once per distinct instant. Buckets are found
 * through a ring indexed by the low bits of the time (no hashing for the usual near, integral
 * instants); instants that collide in the ring fall back to a map.
 * @internal
 */
export class FutureQueue {
  private readonly times: number[] = [];
  private readonly ring: (Bucket | null)[] = new Array<Bucket | null>(RING_SLOTS).fill(null);
  private readonly overflow = new Map<number, Bucket>();
  private readonly pool: Bucket[] = [];

  get isEmpty(): boolean {
    return this.times.length === 0;
  }

  /** The earliest instant, or Infinity. */
  peekTime(): number {
    return this.times.length > 0 ? (this.times[0] as number) : Number.POSITIVE_INFINITY;
  }

  /** Every future bucket, earliest first (diagnostics, not the hot path). */
  private bucketsInOrder(): Bucket[] {
    const buckets = this.ring.filter((bucket): bucket is Bucket => bucket !== null);
    buckets.push(...this.overflow.values());
    return buckets.sort((a, b) => a.time - b.time);
  }

  /** Number of events waiting in future buckets. */
  countEvents(): number {
    let count = 0;
    for (const bucket of this.bucketsInOrder()) count += bucket.size;
    return count;
  }

  /** All queued future events in schedule order (diagnostics). */
  eventsInOrder(): Event[] {
    return this.bucketsInOrder().flatMap((bucket) => bucket.events());
  }

  /** The bucket of instant `time`, created if needed. */
  bucketAt(time: number): Bucket {
    const slot = time & RING_MASK;
    let bucket = this.ring[slot] as Bucket | null;
    if (bucket !== null) {
      if (bucket.time === time) return bucket;
      bucket = this.overflow.get(time) ?? null;
      if (bucket !== null) return bucket;
      bucket = this.recycledBucket(time);
      this.overflow.set(time, bucket);
    } else {
      // The slot is free, but the instant may have gone to the overflow while the slot was taken.
      if (this.overflow.size > 0) {
        const other = this.overflow.get(time);
        if (other !== undefined) return other;
      }
      bucket = this.recycledBucket(time);
      this.ring[slot] = bucket;
    }
    this.pushTime(time);
    return bucket;
  }

  /** Removes and returns the earliest bucket; the caller serves it and hands it back with `recycle`. */
  popBucket(): Bucket {
    const time = this.popTime();
    const slot = time & RING_MASK;
    const bucket = this.ring[slot] as Bucket | null;
    if (bucket !== null && bucket.time === time) {
      this.ring[slot] = null;
      return bucket;
    }
    const other = this.overflow.get(time) as Bucket;
    this.overflow.delete(time);
    return other;
  }

  /** A cleared bucket for instant `time`, from the pool when one is free (not put in the queue). */
  recycledBucket(time: number): Bucket {
    const bucket = this.pool.pop() ?? new Bucket();
    bucket.reset(time);
    return bucket;
  }

  recycle(bucket: Bucket): void {
    bucket.reset(0);
    if (this.pool.length < 64) this.pool.push(bucket);
  }

  private pushTime(time: number): void {
    const heap = this.times;
    let index = heap.length;
    heap.push(time);
    while (index > 0) {
      const parent = (index - 1) >> 1;
      const parentTime = heap[parent] as number;
      if (parentTime <= time) break;
      heap[index] = parentTime;
      index = parent;
    }
    heap[index] = time;
  }

  private popTime(): number {
    const heap = this.times;
    const top = heap[0] as number;
    const last = heap.pop() as number;
    const length = heap.length;
    if (length > 0) {
      let index = 0;
      for (;;) {
        const left = 2 * index + 1;
        if (left >= length) break;
        const right = left + 1;
        let child = left;
        let childTime = heap[left] as number;
        if (right < length && (heap[right] as number) < childTime) {
          child = right;
          childTime = heap[right] as number;
        }
        if (childTime >= last) break;
        heap[index] = childTime;
        index = child;
      }
      heap[index] = last;
    }
    return top;
  }
}
