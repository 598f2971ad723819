import { KbError, type KbErrorContext } from "@kb/errors";
import { formatBlocked, formatBlockedByKind } from "./blocked-report.js";
import { AllOf, AnyOf } from "./condition.js";
import {
  type CallbackSlot,
  DEFUSED,
  Event,
  FAILED,
  NORMAL,
  PROCESSED,
  type Timeout,
  TRIGGERED,
  URGENT,
} from "./event.js";
import { Process, type ProcessGenerator } from "./process.js";
import { type Bucket, FutureQueue } from "./time-queue.js";

/** What a process still waits on after a run: see {@link Environment.blocked}. */
export interface BlockedProcess {
  /** The process. */
  readonly process: Process;
  /** Its name. */
  readonly name: string;
  /** The event it waits on (pending: nothing has triggered it). */
  readonly waitsOn: Event;
  /** A description of that event, such as `get from Store "inbox" (0/2 items, 1 getter waiting)`. */
  readonly description: string;
}

/** Options of {@link Environment}. */
export interface EnvironmentOptions {
  /** Simulated time the environment starts at, in ns. Default 0. */
  readonly initialTime?: number;
}

/**
 * The simulation: a clock in ns and a schedule of triggered events. SimPy's `Environment`.
 *
 * Events run in `(time, priority, insertion order)` order: at equal times urgent events (process
 * starts, interrupts) first, then the rest in the order they were scheduled, so the same program
 * gives the same trace on every run.
 *
 * @example
 * ```ts
 * const env = new Environment();
 * env.process(function* () {
 *   yield env.timeout(5);
 *   console.log(env.now); // 5
 * }());
 * env.run();
 * ```
 */
/** Options of {@link Environment.run}. */
export interface RunOptions {
  /** Return after processing this many events (>= 1), as after `pause()`; the run can be continued. */
  readonly maxEvents?: number;
  /**
   * Return (as after `pause()`) before processing an event later than this simulated time (ns);
   * `now` stays at the last event processed. For drivers that stop a run at a time limit without
   * scheduling an event of their own.
   */
  readonly stopAfterNs?: number;
}

export class Environment {
  /** @internal */ _now: number;
  /** @internal */ _active: Process | null = null;
  // The bucket of the current instant lives outside the future queue: zero-delay scheduling (most
  // of a simulation's events) is a bare array push.
  private current: Bucket;
  private readonly future = new FutureQueue();
  private stopRequested = false;
  private running = false;
  private stopValue: unknown = undefined;
  private stopError: { error: unknown } | null = null;
  private readonly live = new Set<Process>();
  private processCount = 0;
  private eventsProcessed = 0;

  constructor(options: EnvironmentOptions = {}) {
    const initialTime = options.initialTime ?? 0;
    if (typeof initialTime !== "number" || !Number.isFinite(initialTime)) {
      throw new KbError(
        "DES_INVALID_ARGUMENT",
        `initialTime must be a finite number of ns, got ${String(initialTime)}.`,
      );
    }
    this._now = initialTime;
    this.current = this.future.recycledBucket(initialTime);
  }

  /** Current simulated time in ns. */
  get now(): number {
    return this._now;
  }

  /** The process whose generator is running right now, or `null` between events. */
  get activeProcess(): Process | null {
    return this._active;
  }

  /** How many events the engine has processed since it was created. */
  get processedEventCount(): number {
    return this.eventsProcessed;
  }

  /** A pending event, to be triggered later with `succeed` or `fail`. */
  event<T = unknown>(): Event<T> {
    return new Event<T>(this);
  }

  /**
   * An event that succeeds with `value` after `delay` ns.
   * Throws `DES_INVALID_DELAY` for a negative, NaN, infinite or non-number delay.
   */
  timeout<T = undefined>(delay: number, value?: T): Timeout<T> {
    if (typeof delay !== "number" || !(delay >= 0 && delay !== Number.POSITIVE_INFINITY)) {
      throw new KbError(
        "DES_INVALID_DELAY",
        `timeout delay must be a finite number of ns >= 0, got ${String(delay)}. Check the computation of the delay.`,
        { context: this._context() },
      );
    }
    const event = new Event<T>(this);
    event._value = value;
    event._flags = TRIGGERED;
    this._schedule(event, NORMAL, delay);
    return event;
  }

  /**
   * Starts a process from a generator object. The process starts at the current time, before
   * normal events already scheduled for it (its start is urgent, as in SimPy). Its event succeeds
   * with the generator's return value or fails with the error it throws.
   */
  process<R>(generator: ProcessGenerator<R>, name?: string): Process<R> {
    this.processCount += 1;
    return new Process<R>(this, generator, name ?? this.processCount);
  }

  /** An event that succeeds when all `events` have succeeded (fails as soon as one fails). */
  allOf(events: Iterable<Event>): AllOf {
    return new AllOf(this, [...events]);
  }

  /** An event that succeeds when any of `events` succeeds (fails as soon as one fails). */
  anyOf(events: Iterable<Event>): AnyOf {
    return new AnyOf(this, [...events]);
  }

  /** Time of the next scheduled event, or `Infinity` if there is none. */
  peek(): number {
    const current = this.current;
    if (current.urgentHead < current.urgentTail || current.normalHead < current.normalTail) {
      return current.time;
    }
    return this.future.peekTime();
  }

  /** Number of triggered events waiting in the schedule. */
  get scheduledCount(): number {
    return this.current.size + this.future.countEvents();
  }

  /**
   * Processes the next event. Throws `DES_INVALID_ARGUMENT` when the schedule is empty, and the
   * error of a failed event that nobody handled.
   */
  step(): void {
    this.assertNotRunning("step");
    const event = this.next();
    if (event === null) {
      throw new KbError("DES_INVALID_ARGUMENT", "step() on an empty schedule: no events left to process.", {
        context: this._context(),
      });
    }
    this.fire(event);
  }

  /**
   * Runs the simulation.
   *
   * - `run()` runs until no events are left.
   * - `run(t)` runs until simulated time `t` (> now); events at `t` itself stay scheduled, and
   *   `now` is `t` afterwards.
   * - `run(event)` runs until `event` is processed and returns its value (throws its error if it
   *   failed). If the schedule runs empty first, throws `DES_DEADLOCK` with the waiting processes
   *   (grouped by kind, alike waits counted: see blocked-report.ts).
   *
   * A failed event that nobody handled stops the run with its error.
   *
   * With `options.maxEvents`, the run also returns (as after {@link pause}: `undefined`, the
   * schedule untouched) once it has processed that many events, so a driver can look at the
   * clock or let the event loop run between slices of a long simulation and then continue; with
   * `options.stopAfterNs`, before it would process an event later than that time.
   */
  run(until?: number | Event, options?: RunOptions): unknown {
    this.assertNotRunning("run");
    let budget = options?.maxEvents ?? Number.POSITIVE_INFINITY;
    const stopAfterNs = options?.stopAfterNs ?? Number.POSITIVE_INFINITY;
    if (!(budget >= 1)) {
      throw new KbError(
        "DES_INVALID_ARGUMENT",
        `run(until, { maxEvents }) needs maxEvents >= 1, got ${String(budget)}.`,
        {
          context: this._context(),
        },
      );
    }
    let untilEvent: Event | null = null;
    if (until !== undefined) {
      if (until instanceof Event) {
        if (until.env !== this) {
          throw new KbError("DES_FOREIGN_EVENT", "run(until) was given an event of another environment.", {
            context: this._context(),
          });
        }
        if ((until._flags & PROCESSED) !== 0) {
          if ((until._flags & FAILED) !== 0) throw until._value;
          return until._value;
        }
        untilEvent = until;
      } else {
        if (typeof until !== "number" || Number.isNaN(until) || until <= this._now) {
          throw new KbError(
            "DES_INVALID_ARGUMENT",
            `run(until) needs a time after now (${this._now} ns), got ${String(until)}.`,
            { context: this._context() },
          );
        }
        if (until === Number.POSITIVE_INFINITY) {
          until = undefined;
        } else {
          untilEvent = new Event(this);
          untilEvent._flags |= TRIGGERED;
          this._schedule(untilEvent, URGENT, until - this._now);
        }
      }
      if (untilEvent !== null) untilEvent.addCallback(this.stopCallback);
    }
    this.stopRequested = false;
    this.stopError = null;
    this.running = true;
    // Slice checks only when asked for: the plain loop stays as tight as it was.
    const sliced = budget < Number.POSITIVE_INFINITY || stopAfterNs < Number.POSITIVE_INFINITY;
    try {
      for (;;) {
        if (
          sliced &&
          (budget-- <= 0 || (this.peek() > stopAfterNs && this.peek() < Number.POSITIVE_INFINITY))
        )
          return undefined;
        const event = this.next();
        if (event === null) break;
        this.fire(event);
        if (this.stopRequested) {
          this.stopRequested = false;
          const stopError = this.stopError as { error: unknown } | null;
          if (stopError !== null) {
            this.stopError = null;
            throw stopError.error;
          }
          return this.stopValue;
        }
      }
    } finally {
      this.running = false;
      // A run that ends early (an unhandled failure) must not leave its stop armed for the next.
      if (untilEvent !== null && (untilEvent._flags & PROCESSED) === 0)
        untilEvent.removeCallback(this.stopCallback);
    }
    if (untilEvent !== null && typeof until !== "number") {
      const blocked = this.blocked();
      throw new KbError(
        "DES_DEADLOCK",
        `run(until=${untilEvent.describe()}) ran out of events before it was triggered; ${
          blocked.length === 0
            ? "no process is waiting."
            : `${blocked.length} process(es) wait forever (by kind; processes of one kind that wait alike are counted, not listed):\n${formatBlockedByKind(blocked)}`
        }`,
        { context: { simTimeNs: this._now } },
      );
    }
    return undefined;
  }

  /**
   * Asks the running `run()` to return after the event being processed (its other callbacks
   * still run). The schedule is untouched, so a later `run()` continues where this one stopped;
   * `run()` returns `undefined` (with `run(event)`, check `event.processed` to tell a pause from
   * the end). Used by drivers that must leave the engine between events, such as a kernel runner
   * waiting for a resumed async kernel to post its next command. Outside `run()` it does nothing.
   */
  pause(): void {
    if (!this.running || this.stopRequested) return;
    this.stopRequested = true;
    this.stopValue = undefined;
  }

  /** True while `run()` is processing events (inside a process or callback). */
  get isRunning(): boolean {
    return this.running;
  }

  /**
   * The processes that are alive and wait on an event nobody has triggered, with what each waits
   * on. After `run()` returns, a non-empty list means the model deadlocked (or left workers idle by
   * design): report it instead of trusting the end time.
   */
  blocked(): BlockedProcess[] {
    const out: BlockedProcess[] = [];
    for (const process of this.live) {
      const target = process._target;
      if (target !== null && (target._flags & TRIGGERED) === 0) {
        out.push({ process, name: process.name, waitsOn: target, description: target.describe() });
      }
    }
    return out;
  }

  /** {@link blocked} as readable lines, one per process (empty string if none). */
  blockedReport(): string {
    return formatBlocked(this.blocked());
  }

  private assertNotRunning(operation: string): void {
    if (this.running) {
      throw new KbError(
        "DES_INVALID_ARGUMENT",
        `${operation}() called while run() is running (from inside a process or callback); yield events instead, and let the outer run() advance time.`,
        { context: this._context() },
      );
    }
  }

  /** @internal Schedules a triggered event `delay` ns from now with the given priority. */
  _schedule(event: Event, priority: number, delay: number): void {
    let bucket = this.current;
    if (delay !== 0) {
      const time = this._now + delay;
      if (time !== bucket.time) bucket = this.future.bucketAt(time);
    }
    if (priority === NORMAL) bucket.normal[bucket.normalTail++] = event;
    else bucket.urgent[bucket.urgentTail++] = event;
  }

  /** @internal */
  _context(): KbErrorContext {
    const active = this._active;
    return active === null ? { simTimeNs: this._now } : { process: active.name, simTimeNs: this._now };
  }

  /** @internal */
  _processStarted(process: Process): void {
    this.live.add(process);
  }

  /** @internal */
  _processEnded(process: Process): void {
    this.live.delete(process);
  }

  /** The next event in schedule order, advancing the clock; null when the schedule is empty. */
  private next(): Event | null {
    for (;;) {
      const current = this.current;
      const urgentHead = current.urgentHead;
      if (urgentHead < current.urgentTail) {
        const event = current.urgent[urgentHead] as Event;
        current.urgent[urgentHead] = null;
        current.urgentHead = urgentHead + 1;
        return event;
      }
      const head = current.normalHead;
      if (head < current.normalTail) {
        const queue = current.normal;
        const event = queue[head] as Event;
        queue[head] = null;
        current.normalHead = head + 1;
        // A long same-instant chain (a zero-delay loop) would grow the array without bound.
        if (head >= 65536 && head * 2 > current.normalTail) {
          queue.copyWithin(0, head + 1, current.normalTail);
          current.normalTail -= head + 1;
          current.normalHead = 0;
          queue.fill(null, current.normalTail);
        }
        return event;
      }
      if (this.future.isEmpty) {
        current.reset(this._now);
        return null;
      }
      const bucket = this.future.popBucket();
      this.future.recycle(current);
      this.current = bucket;
      this._now = bucket.time;
    }
  }

  /** Processes one event: runs its callbacks; an unhandled failure stops the run. */
  private fire(event: Event): void {
    this.eventsProcessed += 1;
    event._flags |= TRIGGERED | PROCESSED;
    const first = event._cb0;
    if (first !== null) {
      const second = event._cb1;
      event._cb0 = null;
      if (second !== null) event._cb1 = null;
      if (typeof first === "function") first(event);
      else first._wake(event);
      if (second !== null) {
        if (typeof second === "function") second(event);
        else if (Array.isArray(second)) {
          for (let i = 0; i < second.length; i++) {
            const slot = second[i] as CallbackSlot;
            if (typeof slot === "function") slot(event);
            else slot._wake(event);
          }
        } else second._wake(event);
      }
    }
    const flags = event._flags;
    if ((flags & (FAILED | DEFUSED)) === FAILED) {
      event._flags = flags | DEFUSED;
      throw event._value;
    }
  }

  private readonly stopCallback = (event: Event): void => {
    this.stopRequested = true;
    if ((event._flags & FAILED) === 0) {
      this.stopValue = event._value;
    } else {
      event._flags |= DEFUSED;
      this.stopError = { error: event._value };
    }
  };
}
