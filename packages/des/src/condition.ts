import { KbError } from "@kb/errors";
import type { Environment } from "./environment.js";
import { DEFUSED, Event, FAILED, PROCESSED, TRIGGERED } from "./event.js";

/**
 * The value of a condition event: the events that had been processed when the condition was, in
 * the order given (nested conditions are flattened), with their values.
 */
export class ConditionValue {
  /** The processed events, in order. */
  readonly events: Event[] = [];

  /** The value of `event`; throws `DES_INVALID_ARGUMENT` if it is not part of this value. */
  get<T>(event: Event<T>): T {
    if (!this.events.includes(event)) {
      throw new KbError(
        "DES_INVALID_ARGUMENT",
        `${event.describe()} is not among the condition's processed events.`,
      );
    }
    return event._value as T;
  }

  /** Whether `event` is among the processed events. */
  has(event: Event): boolean {
    return this.events.includes(event);
  }

  /** The values, in event order. */
  values(): unknown[] {
    return this.events.map((event) => event._value);
  }

  /** A `Map` from event to value. */
  toMap(): Map<Event, unknown> {
    return new Map(this.events.map((event) => [event, event._value]));
  }
}

/**
 * An event that triggers once `evaluate(events, processedCount)` holds: the base of
 * {@link AllOf} and {@link AnyOf}. It fails as soon as one of its events fails (and handles that
 * failure). With no events it succeeds at once.
 */
export class Condition extends Event<ConditionValue> {
  /** @internal */ readonly _events: readonly Event[];
  private count = 0;
  private readonly evaluate: (events: readonly Event[], count: number) => boolean;
  private readonly checkCallback = (event: Event): void => this.check(event);

  constructor(
    env: Environment,
    evaluate: (events: readonly Event[], count: number) => boolean,
    events: readonly Event[],
  ) {
    super(env);
    this.evaluate = evaluate;
    this._events = events;
    for (const event of events) {
      if (!(event instanceof Event) || event.env !== env) {
        throw new KbError(
          "DES_FOREIGN_EVENT",
          "a condition (allOf/anyOf) was given something that is not an event of its environment.",
          { context: env._context() },
        );
      }
    }
    if (events.length === 0) {
      this.succeed(new ConditionValue());
      return;
    }
    for (const event of events) {
      if ((event._flags & PROCESSED) !== 0) this.check(event);
      else event.addCallback(this.checkCallback);
    }
    this.addCallback(() => this.buildValue());
  }

  override describe(): string {
    const done = this._events.filter((event) => (event._flags & PROCESSED) !== 0).length;
    return `${this.constructor.name}(${this._events.length} events, ${done} processed: ${this._events
      .filter((event) => (event._flags & PROCESSED) === 0)
      .map((event) => event.describe())
      .join(", ")})`;
  }

  /** @internal */
  _populate(value: ConditionValue): void {
    for (const event of this._events) {
      if (event instanceof Condition) event._populate(value);
      else if ((event._flags & PROCESSED) !== 0) value.events.push(event);
    }
  }

  private check(event: Event): void {
    if ((this._flags & TRIGGERED) !== 0) return;
    this.count += 1;
    if ((event._flags & FAILED) !== 0) {
      event._flags |= DEFUSED;
      this.fail(event._value);
    } else if (this.evaluate(this._events, this.count)) {
      this.succeed();
    }
  }

  private buildValue(): void {
    for (const event of this._events) {
      if ((event._flags & PROCESSED) === 0) event.removeCallback(this.checkCallback);
    }
    if ((this._flags & FAILED) === 0) {
      const value = new ConditionValue();
      this._populate(value);
      this._value = value;
    }
  }
}

/** Succeeds when every one of its events has succeeded: `env.allOf([...])`. */
export class AllOf extends Condition {
  constructor(env: Environment, events: readonly Event[]) {
    super(env, (all, count) => count === all.length, events);
  }
}

/** Succeeds when any one of its events has succeeded: `env.anyOf([...])`. */
export class AnyOf extends Condition {
  constructor(env: Environment, events: readonly Event[]) {
    super(env, (all, count) => count > 0 || all.length === 0, events);
  }
}
