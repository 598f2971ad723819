import { KbError } from "@kb/errors";
import type { Environment } from "../environment.js";
import { BaseResource, checkCapacity, formatCapacity, ResourceEvent } from "./base-resource.js";

/** Options of {@link Store}, {@link FilterStore} and {@link PriorityStore}. */
export interface StoreOptions {
  /** Maximum number of items held; a put into a full store waits. Default Infinity. */
  readonly capacity?: number;
  /** A name for messages and `env.blocked()`. */
  readonly name?: string;
}

/** A put into a store: succeeds once the item is in the store. */
export interface StorePut<T> extends ResourceEvent<undefined> {
  /** The item to put. */
  readonly payload: T;
}

/** A get from a store: succeeds with the item taken. */
export interface StoreGet<T> extends ResourceEvent<T> {
  /** For a {@link FilterStore}: which items this get accepts (undefined: any). */
  readonly payload: ((item: T) => boolean) | undefined;
}

/**
 * Common part of the stores: capacity, `put`, `get`, closing. Puts wait while the store is full
 * and gets wait while it is empty, each in FIFO order.
 */
export abstract class BaseStore<T> extends BaseResource<StorePut<T>, StoreGet<T>> {
  /** Maximum number of items. */
  readonly capacity: number;
  private closedFlag = false;

  constructor(env: Environment, options: StoreOptions, kind: string) {
    super(env, options.name ?? kind);
    this.capacity = checkCapacity(env, kind, options.capacity ?? Number.POSITIVE_INFINITY);
  }

  /** Number of items held. */
  abstract get size(): number;

  /** Whether {@link close} has been called. */
  get closed(): boolean {
    return this.closedFlag;
  }

  /**
   * Puts `item` into the store; the event succeeds once it is in (at once if there is room).
   * Throws `DES_STORE_CLOSED` if the store is closed.
   */
  put(item: T): StorePut<T> {
    if (this.closedFlag) {
      throw new KbError(
        "DES_STORE_CLOSED",
        `put into ${this.describe()}, which was closed; nothing may be put into a closed store. Stop the producer before closing, or do not close.`,
        { context: this.env._context() },
      );
    }
    return this.enqueuePut(new ResourceEvent(this, true, item) as StorePut<T>);
  }

  /**
   * Closes the store: later puts throw `DES_STORE_CLOSED`; items already in (or in waiting puts)
   * can still be taken; gets that find the store closed and drained fail with
   * `DES_STORE_CLOSED`, so consumers can end their loops.
   */
  close(): void {
    this.closedFlag = true;
    // Gets wait only on an empty store; if nothing more can arrive, none of them ever will be
    // served, so all fail now (the trigger loop of a FIFO store would only reach the first).
    const queue = this._getQueue;
    while (queue.head !== null && this.size === 0 && this._putQueue.length === 0) {
      const waiting = queue.head;
      queue.unlink(waiting, null);
      this.failIfDrained(waiting);
    }
  }

  override describe(): string {
    return `${this.constructor.name} "${this.name}" (${this.size}/${formatCapacity(this.capacity)} items, ${this._putQueue.length} putter(s) and ${this._getQueue.length} getter(s) waiting${this.closedFlag ? ", closed" : ""})`;
  }

  /** @internal Fails `event` if the store is closed and nothing more can arrive. */
  protected failIfDrained(event: StoreGet<T>): boolean {
    if (this.closedFlag && this.size === 0 && this._putQueue.length === 0) {
      event.fail(
        new KbError("DES_STORE_CLOSED", `get from ${this.describe()}: the store is closed and empty.`, {
          context: this.env._context(),
        }),
      );
      return true;
    }
    return false;
  }
}

/**
 * A FIFO store of items with a capacity: SimPy's `Store`. `put` waits while full, `get` waits
 * while empty; both queues are served in order.
 *
 * @example
 * ```ts
 * const inbox = new Store<number>(env, { capacity: 2, name: "inbox" });
 * env.process(function* () { yield inbox.put(42); }());
 * env.process(function* () { const item = yield inbox.get(); }());
 * ```
 */
export class Store<T> extends BaseStore<T> {
  // The items as a ring: allocated at the capacity (up to 16, then grown by doubling), so a
  // bounded store never resizes or shifts an array.
  private buffer: (T | undefined)[];
  private head = 0;
  private count = 0;

  constructor(env: Environment, options: StoreOptions = {}) {
    super(env, options, "Store");
    this.buffer = new Array<T | undefined>(Math.min(this.capacity, 16)).fill(undefined);
  }

  get size(): number {
    return this.count;
  }

  /** The items, oldest first (a copy). */
  get items(): T[] {
    const out: T[] = [];
    for (let i = 0; i < this.count; i++) out.push(this.buffer[(this.head + i) % this.buffer.length] as T);
    return out;
  }

  /** Takes the oldest item; the event succeeds with it (at once if the store holds one). */
  get(): StoreGet<T> {
    return this.enqueueGet(new ResourceEvent<T>(this, false) as StoreGet<T>);
  }

  /**
   * Puts `item` at once if the store has room and no earlier put waits, without creating an
   * event; returns whether it did. A waiting get is served immediately (not when a put event
   * would have been processed), so use this where no process needs to wait on the put: it saves
   * the put's event and one engine step per hand-over. Throws `DES_STORE_CLOSED` like `put`.
   *
   * **Gotcha**: unlike `put`, the hand-over to a waiting getter happens inside this call, so at
   * one instant the getter may run before other events already scheduled for that instant.
   */
  tryPut(item: T): boolean {
    if (this.closed) this.put(item); // throws DES_STORE_CLOSED
    if (this._putQueue.head !== null || this.count >= this.capacity) return false;
    let buffer = this.buffer;
    if (this.count === buffer.length) buffer = this.grow();
    let tail = this.head + this.count;
    if (tail >= buffer.length) tail -= buffer.length;
    buffer[tail] = item;
    this.count++;
    if (this._getQueue.head !== null) this._triggerGet();
    return true;
  }

  /**
   * Takes the oldest item at once, without creating an event, or returns undefined when the store
   * is empty (so do not store `undefined` items if you use this). Room it frees is given to a
   * waiting put immediately. The counterpart of {@link tryPut}, with the same gotcha.
   */
  tryGet(): T | undefined {
    if (this.count === 0) return undefined;
    const buffer = this.buffer;
    const head = this.head;
    const item = buffer[head] as T;
    buffer[head] = undefined;
    this.head = head + 1 === buffer.length ? 0 : head + 1;
    this.count -= 1;
    if (this._putQueue.head !== null) this._triggerPut();
    return item;
  }

  // As SimPy: only the head of each queue is tried (a FIFO store cannot serve a later request
  // before an earlier one).
  protected doPut(event: StorePut<T>): boolean {
    const count = this.count;
    if (count < this.capacity) {
      let buffer = this.buffer;
      if (count === buffer.length) buffer = this.grow();
      let tail = this.head + count;
      if (tail >= buffer.length) tail -= buffer.length;
      buffer[tail] = event.payload;
      this.count = count + 1;
      event.succeed();
    }
    return false;
  }

  protected doGet(event: StoreGet<T>): boolean {
    if (this.count > 0) {
      const buffer = this.buffer;
      const head = this.head;
      const item = buffer[head] as T;
      buffer[head] = undefined;
      this.head = head + 1 === buffer.length ? 0 : head + 1;
      this.count -= 1;
      event.succeed(item);
    } else {
      this.failIfDrained(event);
    }
    return false;
  }

  private grow(): (T | undefined)[] {
    const items = this.items;
    const buffer = new Array<T | undefined>(Math.min(this.capacity, Math.max(16, items.length * 2))).fill(
      undefined,
    );
    for (let i = 0; i < items.length; i++) buffer[i] = items[i];
    this.buffer = buffer;
    this.head = 0;
    return buffer;
  }
}

/**
 * A store whose gets take the first item that matches their filter: SimPy's `FilterStore`.
 * Every waiting get is tried whenever an item arrives, so a later get may be served before an
 * earlier one whose filter matches nothing.
 */
export class FilterStore<T> extends BaseStore<T> {
  /** The items, oldest first. */
  readonly items: T[] = [];

  constructor(env: Environment, options: StoreOptions = {}) {
    super(env, options, "FilterStore");
  }

  get size(): number {
    return this.items.length;
  }

  /** Takes the oldest item for which `filter` returns true (any item if no filter). */
  get(filter: (item: T) => boolean = () => true): StoreGet<T> {
    return this.enqueueGet(new ResourceEvent<T>(this, false, filter) as StoreGet<T>);
  }

  protected doPut(event: StorePut<T>): boolean {
    if (this.items.length < this.capacity) {
      this.items.push(event.payload);
      event.succeed();
    }
    return false;
  }

  protected doGet(event: StoreGet<T>): boolean {
    const filter = event.payload ?? (() => true);
    const index = this.items.findIndex(filter);
    if (index >= 0) {
      const [item] = this.items.splice(index, 1);
      event.succeed(item as T);
    } else {
      this.failIfDrained(event);
    }
    return true;
  }
}

/** Options of {@link PriorityStore}. */
export interface PriorityStoreOptions<T> extends StoreOptions {
  /**
   * Orders items: negative when `a` comes out before `b`. Default: by `item.priority` (or the item
   * itself if it is a number), lower first. Equal items come out in insertion order.
   */
  readonly compare?: (a: T, b: T) => number;
}

/**
 * A store whose gets take the lowest item first: SimPy's `PriorityStore`. Items that compare
 * equal come out in the order they were put (SimPy leaves that order to its heap; here it is FIFO
 * so runs stay reproducible whatever the item type).
 */
export class PriorityStore<T> extends BaseStore<T> {
  private readonly heap: { item: T; seq: number }[] = [];
  private readonly compare: (a: T, b: T) => number;
  private seq = 0;

  constructor(env: Environment, options: PriorityStoreOptions<T> = {}) {
    super(env, options, "PriorityStore");
    this.compare = options.compare ?? defaultPriorityCompare;
  }

  get size(): number {
    return this.heap.length;
  }

  /** The items in the order they will come out. */
  get items(): T[] {
    return [...this.heap].sort((a, b) => this.before(a, b)).map((entry) => entry.item);
  }

  /** Takes the lowest item. */
  get(): StoreGet<T> {
    return this.enqueueGet(new ResourceEvent<T>(this, false) as StoreGet<T>);
  }

  /** Puts `item`; throws `DES_INVALID_ARGUMENT` at once if the comparison cannot order it. */
  override put(item: T): StorePut<T> {
    this.compare(item, item);
    return super.put(item);
  }

  protected doPut(event: StorePut<T>): boolean {
    if (this.heap.length < this.capacity) {
      this.push({ item: event.payload, seq: this.seq++ });
      event.succeed();
    }
    return false;
  }

  protected doGet(event: StoreGet<T>): boolean {
    if (this.heap.length > 0) event.succeed(this.pop());
    else this.failIfDrained(event);
    return false;
  }

  private before(a: { item: T; seq: number }, b: { item: T; seq: number }): number {
    return this.compare(a.item, b.item) || a.seq - b.seq;
  }

  private push(entry: { item: T; seq: number }): void {
    const heap = this.heap;
    let index = heap.length;
    heap.push(entry);
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if (this.before(heap[parent]!, entry) <= 0) break;
      heap[index] = heap[parent]!;
      index = parent;
    }
    heap[index] = entry;
  }

  private pop(): T {
    const heap = this.heap;
    const top = heap[0]!;
    const last = heap.pop()!;
    if (heap.length > 0) {
      let index = 0;
      for (;;) {
        const left = 2 * index + 1;
        if (left >= heap.length) break;
        const right = left + 1;
        const child = right < heap.length && this.before(heap[right]!, heap[left]!) < 0 ? right : left;
        if (this.before(heap[child]!, last) >= 0) break;
        heap[index] = heap[child]!;
        index = child;
      }
      heap[index] = last;
    }
    return top.item;
  }
}

function defaultPriorityCompare(a: unknown, b: unknown): number {
  return priorityOf(a) - priorityOf(b);
}

function priorityOf(item: unknown): number {
  if (typeof item === "number") return item;
  if (
    item !== null &&
    typeof item === "object" &&
    typeof (item as { priority?: unknown }).priority === "number"
  ) {
    return (item as { priority: number }).priority;
  }
  throw new KbError(
    "DES_INVALID_ARGUMENT",
    `PriorityStore item ${String(item)} has no numeric priority; put numbers or objects with a numeric "priority", or pass a compare function.`,
  );
}
