import { KbError } from "@kb/errors";
import type { Environment } from "./environment.js";

/** A function called with the event once the event is processed. */
// Declared through a method so the parameter is bivariant: an Event<number> is usable wherever an
// Event<unknown> is expected, callbacks included.
export type EventCallback<T = unknown> = { bivarianceHack(event: Event<T>): void }["bivarianceHack"];

/**
 * @internal An object woken when an event it waits on is processed: a process or a resource.
 * Stored in an event's callback slots directly, so waiting allocates no closure and processing an
 * event touches no closure object (it matters with tens of thousands of live processes).
 */
export interface Waiter {
  _wake(event: Event<any>): void;
}

/** @internal what a callback slot holds */
export type CallbackSlot = EventCallback | Waiter;

/** Scheduling priority of urgent events (process starts, interrupts, `run(until)` stops). */
export const URGENT = 0;
/** Scheduling priority of every other event. */
export const NORMAL = 1;

// An event's lifecycle and outcome are bits of one small integer, `_flags`, rather than a field
// each: every event is allocated on the hot path, and each field is 8 bytes that a
// young-generation collection copies for every event still queued. Pending: no bit set.
/** @internal bit of `_flags`: triggered (has a value; sits in the schedule or was processed) */
export const TRIGGERED = 1;
/** @internal bit of `_flags`: processed (its callbacks have run); set together with TRIGGERED */
export const PROCESSED = 2;
/** @internal bit of `_flags`: the event failed (its value is the error) */
export const FAILED = 4;
/** @internal bit of `_flags`: a failure is handled (SimPy's `defused`) */
export const DEFUSED = 8;
/** @internal bit of `_flags` of a resource request: a put (else a get) */
export const IS_PUT = 16;

/**
 * Something that may happen at a point in simulated time: the SimPy `Event`.
 *
 * An event is *pending* until `succeed`/`fail` *triggers* it (or it is created triggered, like a
 * timeout); a triggered event sits in the schedule and is *processed* when the engine reaches it,
 * which runs its callbacks in the order they were added (a process waiting on it is one of them).
 * An event triggers exactly once: a second `succeed`/`fail` throws `DES_ALREADY_TRIGGERED`.
 *
 * **Gotchas**: a failed event that no process or callback handles (sets `defused`) stops the run
 * with its error when it is processed. Yielding a failed event from a process handles it: the
 * error is thrown inside the generator.
 */
export class Event<T = unknown> {
  /** The environment this event belongs to. */
  readonly env: Environment;
  /** @internal lifecycle and outcome bits: TRIGGERED, PROCESSED, FAILED, DEFUSED, IS_PUT */
  _flags = 0;
  /** @internal */ _value: unknown = undefined;
  // Callbacks: one inline slot and a second that holds either a callback or, from the third
  // callback on, an array of all callbacks after the first. The common case (a resource trigger
  // and one waiting process) allocates nothing.
  /** @internal */ _cb0: CallbackSlot | null = null;
  /** @internal */ _cb1: CallbackSlot | CallbackSlot[] | null = null;

  constructor(env: Environment) {
    this.env = env;
  }

  /** True once `succeed`/`fail` has been called (or the event was created triggered). */
  get triggered(): boolean {
    return (this._flags & TRIGGERED) !== 0;
  }

  /** True once the engine has processed the event and run its callbacks. */
  get processed(): boolean {
    return (this._flags & PROCESSED) !== 0;
  }

  /** True if the event succeeded. Throws `DES_INVALID_ARGUMENT` while it is pending. */
  get ok(): boolean {
    if ((this._flags & TRIGGERED) === 0) throw this._notYet("ok");
    return (this._flags & FAILED) === 0;
  }

  /** The success value, or the error of a failed event. Throws `DES_INVALID_ARGUMENT` while pending. */
  get value(): T {
    if ((this._flags & TRIGGERED) === 0) throw this._notYet("value");
    return this._value as T;
  }

  /**
   * Whether a failure of this event has been handled. A failed, processed event that is not
   * defused stops the run; set it to `true` to swallow the failure.
   */
  get defused(): boolean {
    return (this._flags & DEFUSED) !== 0;
  }
  set defused(value: boolean) {
    this._flags = value ? this._flags | DEFUSED : this._flags & ~DEFUSED;
  }

  /**
   * The callbacks that will run when the event is processed, in order; `null` once it has been
   * processed (as in SimPy). A copy: use {@link addCallback} / {@link removeCallback} to change it.
   */
  get callbacks(): EventCallback<T>[] | null {
    if ((this._flags & PROCESSED) !== 0) return null;
    const slots: CallbackSlot[] = [];
    if (this._cb0 !== null) slots.push(this._cb0);
    const second = this._cb1;
    if (Array.isArray(second)) slots.push(...second);
    else if (second !== null) slots.push(second);
    return slots.map((slot) => (typeof slot === "function" ? slot : (event: Event<T>) => slot._wake(event)));
  }

  /**
   * Adds a callback to run when the event is processed. On an event that is already processed
   * the callback is not called (as in SimPy); check {@link processed} first.
   */
  addCallback(callback: EventCallback<T>): void {
    this._addSlot(callback);
  }

  /** @internal */
  _addSlot(callback: CallbackSlot): void {
    if ((this._flags & PROCESSED) !== 0) {
      throw new KbError(
        "DES_INVALID_ARGUMENT",
        "cannot add a callback to an event that has already been processed; read its value instead.",
        { context: this.env._context() },
      );
    }
    const second = this._cb1;
    if (this._cb0 === null) this._cb0 = callback;
    else if (second === null) this._cb1 = callback;
    else if (Array.isArray(second)) second.push(callback);
    else this._cb1 = [second, callback];
  }

  /** Removes the first occurrence of `callback`; returns whether it was found. Order is kept. */
  removeCallback(callback: EventCallback<T>): boolean {
    return this._removeSlot(callback);
  }

  /** @internal */
  _removeSlot(callback: CallbackSlot): boolean {
    const second = this._cb1;
    if (this._cb0 === callback) {
      this._cb0 = null;
      if (Array.isArray(second)) this._cb0 = second.shift() ?? null;
      else if (second !== null) this._cb0 = second;
      if (!Array.isArray(second) || second.length === 0) this._cb1 = null;
      return true;
    }
    if (second === callback) {
      this._cb1 = null;
      return true;
    }
    if (Array.isArray(second)) {
      const index = second.indexOf(callback);
      if (index >= 0) {
        second.splice(index, 1);
        if (second.length === 0) this._cb1 = null;
        return true;
      }
    }
    return false;
  }

  /**
   * Triggers the event as successful with `value` and schedules it at the current time.
   * Throws `DES_ALREADY_TRIGGERED` if it was triggered before.
   */
  succeed(value?: T): this {
    if ((this._flags & TRIGGERED) !== 0) throw this._alreadyTriggered("succeed");
    this._flags = (this._flags & ~FAILED) | TRIGGERED;
    this._value = value;
    this.env._schedule(this, NORMAL, 0);
    return this;
  }

  /**
   * Triggers the event as failed with `error` and schedules it at the current time. Whoever waits
   * on it receives the error (a process gets it thrown at its `yield`).
   * Throws `DES_ALREADY_TRIGGERED` if it was triggered before.
   */
  fail(error: unknown): this {
    if ((this._flags & TRIGGERED) !== 0) throw this._alreadyTriggered("fail");
    this._flags |= FAILED | TRIGGERED;
    this._value = error;
    this.env._schedule(this, NORMAL, 0);
    return this;
  }

  /** Triggers this event with the outcome (ok and value) of another, triggered event. */
  trigger(other: Event<T>): this {
    if ((this._flags & TRIGGERED) !== 0) throw this._alreadyTriggered("trigger");
    this._flags = (this._flags & ~FAILED) | (other._flags & FAILED) | TRIGGERED;
    this._value = other._value;
    this.env._schedule(this, NORMAL, 0);
    return this;
  }

  /** A short human-readable description, used by `env.blocked()` and error messages. */
  describe(): string {
    return "an event";
  }

  /** @internal */
  _alreadyTriggered(operation: string): KbError {
    return new KbError(
      "DES_ALREADY_TRIGGERED",
      `${operation}() on ${this.describe()} that was already triggered (${(this._flags & FAILED) === 0 ? "succeeded" : "failed"}); an event triggers exactly once. Create a new event for a new occurrence.`,
      { context: this.env._context() },
    );
  }

  /** @internal */
  _notYet(property: string): KbError {
    return new KbError(
      "DES_INVALID_ARGUMENT",
      `${property} of ${this.describe()} read while it is still pending; wait for it (yield it) or check .triggered first.`,
      { context: this.env._context() },
    );
  }
}

/**
 * What `env.timeout(delay, value)` returns: an event created triggered that the engine processes
 * `delay` ns later. At run time it is a plain {@link Event} (one object shape for the engine's hot
 * path), so there is no `Timeout` class to test with `instanceof`.
 */
export type Timeout<T = undefined> = Event<T>;
