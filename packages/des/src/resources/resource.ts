import { KbError } from "@kb/errors";
import type { Environment } from "../environment.js";
import { TRIGGERED } from "../event.js";
import { BaseResource, checkCapacity, formatCapacity, ResourceEvent } from "./base-resource.js";

/** Options of {@link Resource} and {@link PriorityResource}. */
export interface ResourceOptions {
  /** How many requests may hold the resource at once. Default 1. */
  readonly capacity?: number;
  /** A name for messages and `env.blocked()`. */
  readonly name?: string;
}

/**
 * A request for a slot of a {@link Resource}: succeeds when granted. Release it with
 * `resource.release(request)` when done; `cancel()` withdraws it while it still waits.
 */
export class Request extends ResourceEvent<undefined> {
  /** Lower is served first (only a {@link PriorityResource} looks at it). */
  readonly priority: number;
  /** Simulated time the request was made, in ns. */
  readonly time: number;
  /** Simulated time it was granted, in ns, or `null` while it waits. */
  usageSince: number | null = null;
  /** @internal */ _released = false;

  constructor(resource: Resource, priority: number) {
    super(resource, true);
    this.priority = priority;
    this.time = resource.env._now;
  }

  /** Whether the request has been released (or cancelled through `release`). */
  get released(): boolean {
    return this._released;
  }
}

/** The release of a granted request: succeeds at once. */
export class Release extends ResourceEvent<undefined> {
  /** The request released. */
  readonly request: Request;

  constructor(resource: Resource, request: Request) {
    super(resource, false);
    this.request = request;
  }
}

/**
 * A resource with `capacity` slots that processes request and release: SimPy's `Resource`.
 * Requests are granted in FIFO order; a slot freed by a release goes to the next request when the
 * release event is processed (at the same simulated time).
 *
 * @example
 * ```ts
 * const bus = new Resource(env, { capacity: 2, name: "bus" });
 * env.process(function* () {
 *   const request = bus.request();
 *   yield request;           // wait for a slot
 *   yield env.timeout(10);   // hold it
 *   bus.release(request);
 * }());
 * ```
 */
export class Resource extends BaseResource<Request, Release> {
  /** Number of slots. */
  readonly capacity: number;
  /** The requests holding a slot now, in the order they were granted. */
  readonly users: Request[] = [];

  constructor(env: Environment, options: ResourceOptions = {}) {
    super(env, options.name ?? "Resource");
    this.capacity = checkCapacity(env, "Resource", options.capacity ?? 1);
  }

  /** Number of slots in use. */
  get count(): number {
    return this.users.length;
  }

  /** The requests waiting for a slot, in the order they will be served. */
  get queue(): readonly Request[] {
    return this._putQueue.toArray();
  }

  /** Requests a slot; the event succeeds when it is granted. */
  request(): Request {
    return this.enqueuePut(new Request(this, 0));
  }

  /**
   * Releases `request`: frees its slot, or withdraws it if it was still waiting. The returned
   * event succeeds at once. Throws `DES_WRONG_RESOURCE` for a request of another resource and
   * `DES_RELEASED_TWICE` for a request released before.
   */
  release(request: Request): Release {
    if (!(request instanceof Request) || request._resource !== this) {
      throw new KbError(
        "DES_WRONG_RESOURCE",
        `release on ${this.describe()} of ${request instanceof Request ? `a request of ${request._resource.describe()}` : "something that is not a request"}; release a request on the resource that granted it.`,
        { context: this.env._context() },
      );
    }
    if (request._released) {
      throw new KbError(
        "DES_RELEASED_TWICE",
        `a request on ${this.describe()} was released twice; release each request exactly once.`,
        { context: this.env._context() },
      );
    }
    request._released = true;
    return this.enqueueGet(new Release(this, request));
  }

  override describe(): string {
    return `${this.constructor.name} "${this.name}" (${this.users.length}/${formatCapacity(this.capacity)} in use, ${this._putQueue.length} request(s) waiting)`;
  }

  protected doPut(event: Request): boolean {
    if (this.users.length < this.capacity) {
      this.users.push(event);
      event.usageSince = this.env._now;
      event.succeed();
    }
    return false;
  }

  protected doGet(event: Release): boolean {
    const request = event.request;
    if ((request._flags & TRIGGERED) === 0) {
      this._withdraw(request);
    } else {
      const index = this.users.indexOf(request);
      if (index >= 0) this.users.splice(index, 1);
    }
    event.succeed();
    return false;
  }
}

/**
 * A {@link Resource} whose waiting requests are served by `priority` (lower first), then in
 * request order: SimPy's `PriorityResource`. Holders are never preempted.
 */
export class PriorityResource extends Resource {
  /** Requests a slot with `priority` (lower is served first; default 0). */
  override request(priority = 0): Request {
    if (typeof priority !== "number" || Number.isNaN(priority)) {
      throw new KbError(
        "DES_INVALID_ARGUMENT",
        `request priority must be a number, got ${String(priority)}.`,
        {
          context: this.env._context(),
        },
      );
    }
    return this.enqueuePut(new Request(this, priority));
  }

  protected override _insertPut(event: Request): void {
    this._putQueue.insertBefore(event, (queued) => queued.priority > event.priority);
  }
}
