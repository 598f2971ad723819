import { KbError } from "@kb/errors";
import type { Environment } from "../environment.js";
import { BaseResource, formatCapacity, ResourceEvent } from "./base-resource.js";

/** Options of {@link Container}. */
export interface ContainerOptions {
  /** Maximum level. Default Infinity. */
  readonly capacity?: number;
  /** Starting level. Default 0. */
  readonly init?: number;
  /** A name for messages and `env.blocked()`. */
  readonly name?: string;
}

/** A put of an amount into a {@link Container}. */
export interface ContainerPut extends ResourceEvent<undefined> {
  /** The amount to add. */
  readonly payload: number;
}

/** A get of an amount from a {@link Container}. */
export interface ContainerGet extends ResourceEvent<undefined> {
  /** The amount to take. */
  readonly payload: number;
}

/**
 * A level of some continuous or countable quantity (bytes of buffer, credits) between 0 and
 * `capacity`: SimPy's `Container`. A put waits until the amount fits; a get waits until the level
 * covers it. Every waiting put (get) is tried in order until one cannot be served.
 */
export class Container extends BaseResource<ContainerPut, ContainerGet> {
  /** Maximum level. */
  readonly capacity: number;
  private currentLevel: number;

  constructor(env: Environment, options: ContainerOptions = {}) {
    super(env, options.name ?? "Container");
    const capacity = options.capacity ?? Number.POSITIVE_INFINITY;
    const init = options.init ?? 0;
    if (typeof capacity !== "number" || !(capacity > 0)) {
      throw new KbError("DES_INVALID_ARGUMENT", `Container capacity must be > 0, got ${String(capacity)}.`, {
        context: env._context(),
      });
    }
    if (typeof init !== "number" || !(init >= 0 && init <= capacity)) {
      throw new KbError(
        "DES_INVALID_ARGUMENT",
        `Container init must be between 0 and the capacity (${formatCapacity(capacity)}), got ${String(init)}.`,
        { context: env._context() },
      );
    }
    this.capacity = capacity;
    this.currentLevel = init;
  }

  /** The current level. */
  get level(): number {
    return this.currentLevel;
  }

  /** Adds `amount` (> 0, at most the capacity); waits while it does not fit. */
  put(amount: number): ContainerPut {
    this.checkAmount("put", amount);
    return this.enqueuePut(new ResourceEvent(this, true, amount) as ContainerPut);
  }

  /** Takes `amount` (> 0, at most the capacity); waits while the level is lower. */
  get(amount: number): ContainerGet {
    this.checkAmount("get", amount);
    return this.enqueueGet(new ResourceEvent(this, false, amount) as ContainerGet);
  }

  override describe(): string {
    return `Container "${this.name}" (level ${this.currentLevel}/${formatCapacity(this.capacity)}, ${this._putQueue.length} put(s) and ${this._getQueue.length} get(s) waiting)`;
  }

  protected doPut(event: ContainerPut): boolean {
    if (this.capacity - this.currentLevel >= event.payload) {
      this.currentLevel += event.payload;
      event.succeed();
      return true;
    }
    return false;
  }

  protected doGet(event: ContainerGet): boolean {
    if (this.currentLevel >= event.payload) {
      this.currentLevel -= event.payload;
      event.succeed();
      return true;
    }
    return false;
  }

  private checkAmount(operation: string, amount: number): void {
    if (typeof amount !== "number" || !(amount > 0) || amount > this.capacity) {
      throw new KbError(
        "DES_INVALID_ARGUMENT",
        `${operation}(${String(amount)}) on ${this.describe()}: the amount must be > 0 and at most the capacity, or it could never be served.`,
        { context: this.env._context() },
      );
    }
  }
}
