import { KbError } from "@kb/errors";
import type { Environment } from "./environment.js";
import { DEFUSED, Event, FAILED, PROCESSED, TRIGGERED, URGENT, type Waiter } from "./event.js";

// `next`/`throw` of every native generator, looked up once. Each `function*` closure has its own
// prototype object, so generator objects of hundreds of closures have hundreds of hidden classes
// and a `generator.next` property lookup goes megamorphic; calling the shared builtin does not.
const GENERATOR_PROTOTYPE = Object.getPrototypeOf(Object.getPrototypeOf((function* () {})())) as Generator;
const generatorNext = GENERATOR_PROTOTYPE.next as (
  this: Generator,
  value?: unknown,
) => IteratorResult<any, any>;
const generatorThrow = GENERATOR_PROTOTYPE.throw as (
  this: Generator,
  error: unknown,
) => IteratorResult<any, any>;

function isNativeGenerator(value: object): boolean {
  return Object.getPrototypeOf(Object.getPrototypeOf(value)) === GENERATOR_PROTOTYPE;
}

/**
 * The generator a process runs: it yields events and receives each event's value back at the
 * `yield`; a failed event is thrown at the `yield` instead. Its return value becomes the process's
 * value.
 */
export type ProcessGenerator<R = unknown> = Generator<Event<any>, R, any>;

/**
 * Thrown inside a process's generator by {@link Process.interrupt}. `cause` is what the
 * interrupter passed. Catch it to handle the interrupt; the process keeps running after that.
 *
 * **Gotchas**: the event the process was waiting on is left alone; if it was a resource request or
 * a store get, cancel it (`request.cancel()`) unless the process will wait on it again.
 */
export class Interrupt extends Error {
  override readonly name = "Interrupt";
  override readonly cause: unknown;

  constructor(cause: unknown) {
    super(`process interrupted${cause === undefined ? "" : `: ${String(cause)}`}`);
    this.cause = cause;
  }
}

/**
 * A running generator: SimPy's `Process`. A process is itself an event that succeeds with the
 * generator's return value or fails with the error it throws, so processes can wait on each other
 * (`const result = yield otherProcess`).
 *
 * Create one with `env.process(generator, name)`.
 */
export class Process<R = unknown> extends Event<R> implements Waiter {
  // The name given, or the process number (the default name is built only when asked for, so
  // tens of thousands of processes do not each carry a string).
  private readonly label: string | number;
  /** @internal */ _generator: ProcessGenerator<R>;
  // A native generator is resumed through the shared builtins above; another iterator through
  // its own `next`/`throw`.
  private readonly native: boolean;
  /** @internal the event this process waits on */ _target: Event | null = null;

  constructor(env: Environment, generator: ProcessGenerator<R>, label: string | number) {
    super(env);
    if (
      generator === null ||
      typeof generator !== "object" ||
      typeof (generator as Partial<ProcessGenerator<R>>).next !== "function" ||
      typeof (generator as Partial<ProcessGenerator<R>>).throw !== "function" ||
      typeof (generator as unknown as Partial<AsyncGenerator>)[Symbol.asyncIterator] === "function"
    ) {
      throw new KbError(
        "DES_NOT_A_GENERATOR",
        `env.process() of process "${processName(label)}" needs a generator object, got ${describeValue(generator)}. Call the generator function: env.process(worker(), ...) rather than env.process(worker, ...); processes are synchronous function* generators, not async ones.`,
        { context: env._context() },
      );
    }
    this.label = label;
    this._generator = generator;
    this.native = isNativeGenerator(generator);
    const start = new Event(env);
    start._flags |= TRIGGERED;
    start._value = undefined;
    start._cb0 = this;
    this._target = start;
    env._processStarted(this);
    env._schedule(start, URGENT, 0);
  }

  /** A name for messages and `env.blocked()`: the one given to `env.process`, else `process#N`. */
  get name(): string {
    return processName(this.label);
  }

  /** True until the generator returns or throws. */
  get isAlive(): boolean {
    return (this._flags & TRIGGERED) === 0;
  }

  /** The event the process currently waits on (`null` once it has ended). */
  get target(): Event | null {
    return this._target;
  }

  /**
   * Throws an {@link Interrupt} with `cause` inside the process at the current time (urgently,
   * before normal events of this instant). The process stops waiting on its current event.
   * Throws `DES_INVALID_INTERRUPT` if the process has ended or interrupts itself.
   */
  interrupt(cause?: unknown): void {
    const env = this.env;
    if ((this._flags & TRIGGERED) !== 0) {
      throw new KbError(
        "DES_INVALID_INTERRUPT",
        `cannot interrupt process "${this.name}": it has already ended.`,
        {
          context: env._context(),
        },
      );
    }
    if (env._active === this) {
      throw new KbError(
        "DES_INVALID_INTERRUPT",
        `process "${this.name}" tried to interrupt itself; throw an error or return instead.`,
        { context: env._context() },
      );
    }
    const interruption = new Event(env);
    interruption._flags = TRIGGERED | FAILED | DEFUSED;
    interruption._value = new Interrupt(cause);
    interruption._cb0 = (event: Event) => {
      if ((this._flags & TRIGGERED) !== 0) return;
      const target = this._target;
      if (target !== null) target._removeSlot(this);
      this._wake(event);
    };
    env._schedule(interruption, URGENT, 0);
  }

  override describe(): string {
    return `process "${this.name}"`;
  }

  /** @internal Resumes the generator with `event`'s outcome until it waits on a pending event. */
  _wake(event: Event): void {
    const env = this.env;
    const generator = this._generator;
    env._active = this;
    for (;;) {
      let step: IteratorResult<Event, R>;
      try {
        if ((event._flags & FAILED) === 0) {
          step = this.native ? generatorNext.call(generator, event._value) : generator.next(event._value);
        } else {
          event._flags |= DEFUSED;
          step = this.native ? generatorThrow.call(generator, event._value) : generator.throw(event._value);
        }
      } catch (error) {
        this.finish(false, error);
        break;
      }
      if (step.done === true) {
        this.finish(true, step.value);
        break;
      }
      const yielded = step.value;
      if (!(yielded instanceof Event) || yielded.env !== env) {
        // Thrown at the offending `yield`, so the stack points at it; uncaught, it fails the process.
        event = this.invalidYield(yielded);
        continue;
      }
      if ((yielded._flags & PROCESSED) === 0) {
        if (yielded._cb0 === null) yielded._cb0 = this;
        else if (yielded._cb1 === null) yielded._cb1 = this;
        else yielded._addSlot(this);
        this._target = yielded;
        break;
      }
      event = yielded;
    }
    env._active = null;
  }

  private finish(ok: boolean, value: unknown): void {
    this._flags = ok ? (this._flags & ~FAILED) | TRIGGERED : this._flags | FAILED | TRIGGERED;
    this._value = value;
    this._target = null;
    this.env._processEnded(this);
    this.env._schedule(this, 1, 0);
  }

  private invalidYield(yielded: unknown): Event {
    const foreign = yielded instanceof Event;
    const failure = new Event(this.env);
    failure._flags = TRIGGERED | PROCESSED | FAILED;
    failure._value = new KbError(
      foreign ? "DES_FOREIGN_EVENT" : "DES_INVALID_YIELD",
      foreign
        ? "yielded an event of another environment; create events with this process's env."
        : `yielded ${describeValue(yielded)}, which is not an event. Yield env.timeout(...), a store get/put, a request, another process or env.event().`,
      { context: this.env._context() },
    );
    return failure;
  }
}

function processName(label: string | number): string {
  return typeof label === "string" ? label : `process#${label}`;
}

function describeValue(value: unknown): string {
  if (value === null) return "null";
  if (value === undefined) return "undefined";
  if (typeof value === "function") return `a function${value.name ? ` (${value.name})` : ""}`;
  if (typeof value === "object") return `an object (${value.constructor?.name ?? "Object"})`;
  return `${typeof value} ${String(value)}`;
}
