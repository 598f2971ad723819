import { KbError } from "@kb/errors";
import type { Environment } from "../environment.js";
import { Event, IS_PUT, TRIGGERED, type Waiter } from "../event.js";

/**
 * A put or get request on a resource: an event that succeeds when the resource grants it.
 * `cancel()` withdraws a request that has not been granted (for example after the waiting process
 * was interrupted); it is a no-op once granted.
 *
 * Store and container requests are all of this one class (typed as {@link StorePut},
 * {@link StoreGet}, {@link ContainerPut}, {@link ContainerGet}): the engine's hot path then sees
 * one object shape, which V8 serves much faster than one shape per request kind.
 */
export class ResourceEvent<T = unknown> extends Event<T> {
  /**
   * What the request carries: the item of a store put, the filter of a filter-store get, the
   * amount of a container put or get; `undefined` otherwise.
   */
  readonly payload: unknown;
  /** @internal */ readonly _resource: BaseResource<any, any>;
  /** @internal next request in the resource's wait queue */ _next: ResourceEvent<any> | null = null;

  constructor(resource: BaseResource<any, any>, isPut: boolean, payload?: unknown) {
    super(resource.env);
    this._resource = resource;
    if (isPut) this._flags = IS_PUT;
    this.payload = payload;
  }

  /** The resource the request was made on. */
  get resource(): BaseResource<any, any> {
    return this._resource;
  }

  /** Whether this is a put (true) or a get (false). */
  get isPut(): boolean {
    return (this._flags & IS_PUT) !== 0;
  }

  /** Withdraws the request if it has not been granted yet; returns whether it was withdrawn. */
  cancel(): boolean {
    if ((this._flags & TRIGGERED) !== 0) return false;
    return this._resource._withdraw(this);
  }

  override describe(): string {
    return `${this.isPut ? "put into" : "get from"} ${this._resource.describe()}`;
  }
}

/**
 * The queueing machinery shared by every resource (SimPy's `BaseResource`): a FIFO of waiting
 * puts and a FIFO of waiting gets. A subclass only says how one put or get is done (`doPut`,
 * `doGet`); when a granted put is processed the waiting gets are retried, and the other way round.
 *
 * **When to use**: to write a resource of your own, subclass it, create requests with
 * `new ResourceEvent(this, isPut, payload)` and hand them to `enqueuePut` / `enqueueGet`.
 */
export abstract class BaseResource<P extends ResourceEvent<any>, G extends ResourceEvent<any>>
  implements Waiter
{
  /** The environment. */
  readonly env: Environment;
  /** A name for messages and `env.blocked()`. */
  readonly name: string;
  /** @internal */ readonly _putQueue = new WaitQueue<P>();
  /** @internal */ readonly _getQueue = new WaitQueue<G>();

  constructor(env: Environment, name: string) {
    this.env = env;
    this.name = name;
  }

  /**
   * @internal A granted put or get of this resource was processed: retry the other queue (each
   * put or get event has its resource as first callback, as in SimPy).
   */
  _wake(event: Event): void {
    if ((event._flags & IS_PUT) !== 0) this._triggerGet();
    else this._triggerPut();
  }

  /** Puts waiting to be granted, oldest first. */
  get putQueue(): readonly P[] {
    return this._putQueue.toArray();
  }

  /** Gets waiting to be granted, oldest first. */
  get getQueue(): readonly G[] {
    return this._getQueue.toArray();
  }

  /** A short description with the resource's state. */
  abstract describe(): string;

  /**
   * Tries to grant `event` (by triggering it). Returns whether to go on trying later queued puts
   * after this one.
   */
  protected abstract doPut(event: P): boolean;

  /** Like {@link doPut} for gets. */
  protected abstract doGet(event: G): boolean;

  /** Queues a new put and tries the waiting puts, as SimPy's `Put.__init__`; returns it. */
  protected enqueuePut(event: P): P {
    event._cb0 = this;
    if (this._putQueue.head === null) {
      // Same outcome as queueing and retrying, without the queue: the new put is the only one.
      this.doPut(event);
      if ((event._flags & TRIGGERED) === 0) this._insertPut(event);
    } else {
      this._insertPut(event);
      this._triggerPut();
    }
    return event;
  }

  /** @internal Where a new put joins the queue: at the end (FIFO); ordered resources override. */
  protected _insertPut(event: P): void {
    this._putQueue.push(event);
  }

  /** Queues a new get and tries the waiting gets, as SimPy's `Get.__init__`; returns it. */
  protected enqueueGet(event: G): G {
    event._cb0 = this;
    if (this._getQueue.head === null) {
      this.doGet(event);
      if ((event._flags & TRIGGERED) === 0) this._getQueue.push(event);
    } else {
      this._getQueue.push(event);
      this._triggerGet();
    }
    return event;
  }

  /** @internal Tries the waiting puts in order, removing the granted ones (SimPy's `_trigger_put`). */
  _triggerPut(): void {
    const queue = this._putQueue;
    let previous: P | null = null;
    let event = queue.head;
    while (event !== null) {
      const next = event._next as P | null;
      const proceed = this.doPut(event);
      if ((event._flags & TRIGGERED) === 0) previous = event;
      else queue.unlink(event, previous);
      if (!proceed) break;
      event = next;
    }
  }

  /** @internal Like {@link _triggerPut} for gets. */
  _triggerGet(): void {
    const queue = this._getQueue;
    let previous: G | null = null;
    let event = queue.head;
    while (event !== null) {
      const next = event._next as G | null;
      const proceed = this.doGet(event);
      if ((event._flags & TRIGGERED) === 0) previous = event;
      else queue.unlink(event, previous);
      if (!proceed) break;
      event = next;
    }
  }

  /** @internal */
  _withdraw(event: ResourceEvent<any>): boolean {
    return ((event._flags & IS_PUT) !== 0 ? this._putQueue : this._getQueue).remove(event as P & G);
  }
}

/**
 * @internal A FIFO of waiting requests linked through the requests themselves: no array to grow,
 * shift or splice, and nothing allocated per resource until something waits.
 */
export class WaitQueue<E extends ResourceEvent<any>> {
  head: E | null = null;
  tail: E | null = null;
  length = 0;

  push(event: E): void {
    if (this.tail === null) this.head = event;
    else this.tail._next = event;
    this.tail = event;
    this.length += 1;
  }

  /** Inserts `event` before the first queued event for which `before(queued)` holds. */
  insertBefore(event: E, before: (queued: E) => boolean): void {
    let previous: E | null = null;
    let current = this.head;
    while (current !== null && !before(current)) {
      previous = current;
      current = current._next as E | null;
    }
    event._next = current;
    if (previous === null) this.head = event;
    else previous._next = event;
    if (current === null) this.tail = event;
    this.length += 1;
  }

  /** Removes `event`, whose predecessor is `previous` (null for the head). */
  unlink(event: E, previous: E | null): void {
    const next = event._next as E | null;
    if (previous === null) this.head = next;
    else previous._next = next;
    if (this.tail === event) this.tail = previous;
    event._next = null;
    this.length -= 1;
  }

  /** Removes `event` wherever it is; returns whether it was queued. */
  remove(event: E): boolean {
    let previous: E | null = null;
    let current = this.head;
    while (current !== null) {
      if (current === event) {
        this.unlink(event, previous);
        return true;
      }
      previous = current;
      current = current._next as E | null;
    }
    return false;
  }

  toArray(): E[] {
    const out: E[] = [];
    for (let current = this.head; current !== null; current = current._next as E | null) out.push(current);
    return out;
  }
}

/** Validates a capacity: a positive integer or Infinity. */
export function checkCapacity(env: Environment, what: string, capacity: number): number {
  if (
    typeof capacity !== "number" ||
    !(capacity > 0) ||
    (capacity !== Number.POSITIVE_INFINITY && !Number.isInteger(capacity))
  ) {
    throw new KbError(
      "DES_INVALID_ARGUMENT",
      `${what} capacity must be a positive integer or Infinity, got ${String(capacity)}.`,
      { context: env._context() },
    );
  }
  return capacity;
}

/** Formats a capacity for messages. */
export function formatCapacity(capacity: number): string {
  return capacity === Number.POSITIVE_INFINITY ? "inf" : String(capacity);
}
