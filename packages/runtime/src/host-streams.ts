import type { Environment, Event } from "@kb/des";
import { KbError } from "@kb/errors";
import type { KernelHost, RunSlices } from "@kb/tl";

/** Microtask turns the driver gives streams before it suspects one awaits something that is not the simulator. */
const SPIN_LIMIT = 10_000;
/** Wall time (ms) a stream may run host code without awaiting the simulator before the run stops. */
const HOST_WAIT_LIMIT_MS = 60_000;

/**
 * A point in a host program that streams wait for and fire ({@link HostStreams} /
 * `Simulator.signal`): "stage 1 has micro-batch 3". Firing it takes no simulated time; a stream
 * that waits for it goes on at the simulated time it fires (or at once, once fired).
 */
export class HostSignal {
  /** @internal */
  constructor(
    /** What it stands for, for messages ("mb3 on stage 1"). */
    readonly name: string,
    /** @internal The DES event it fires. */
    readonly event: Event<unknown>,
    private readonly waitFor: (signal: HostSignal) => Promise<void>,
  ) {}

  /** True once {@link fire} was called. */
  get fired(): boolean {
    return this.event.triggered;
  }

  /** Fires it (once: a second call does nothing). */
  fire(): void {
    if (!this.event.triggered) this.event.succeed();
  }

  /** Waits until it fires (from a stream of `Simulator.streams`, or the host program alone). */
  wait(): Promise<void> {
    return this.waitFor(this);
  }
}

/**
 * @internal The host streams of `Simulator.streams`: async host tasks that use one simulator at
 * the same simulated time, like CUDA streams. A stream runs host code until it awaits a simulator
 * operation (a launch, a host copy, a {@link HostSignal}); once every live stream waits, the
 * driver runs the engine until the first awaited operation completes, lets its stream run on at
 * that simulated time, and so on. The order is deterministic: streams start in the order given,
 * and a stream continues when the event it waits for is processed.
 */
export class HostStreams {
  /** Live streams that are running host code (not waiting on the simulator). */
  private running = 0;
  /** Streams started and not finished. */
  private live = 0;
  /** What each waiting stream waits for, for a deadlock's message. */
  private readonly waits = new Map<number, string>();
  private nextWait = 0;
  constructor(
    private readonly env: Environment,
    private readonly host: KernelHost,
  ) {}

  /** Starts `task` as a stream; `onDone` runs synchronously when it ends (before the driver looks). */
  start<T>(task: () => Promise<T>, onDone?: () => void): Promise<T> {
    this.running++;
    this.live++;
    return (async () => {
      try {
        return await task();
      } finally {
        this.running--;
        this.live--;
        onDone?.();
      }
    })();
  }

  /**
   * Streams started from inside a stream: the caller waits for all of them (it is not running
   * meanwhile) and goes on, at the simulated time the last one ends, with their results.
   */
  nest<T>(tasks: readonly (() => Promise<T>)[]): Promise<T[]> {
    if (tasks.length === 0) return Promise.resolve([]);
    let left = tasks.length;
    this.running--;
    return Promise.all(
      tasks.map((task) =>
        this.start(task, () => {
          if (--left === 0) this.running++;
        }),
      ),
    );
  }

  /**
   * From inside a stream: awaits `promise`, which another stream settles (a launch it started),
   * counting this stream as waiting on the simulator meanwhile.
   */
  external<T>(promise: Promise<T>): Promise<T> {
    this.running--;
    return promise.finally(() => {
      this.running++;
    });
  }

  /** From inside a stream: waits for `event` while the driver runs the engine. */
  wait<T>(event: Event<T>, what: string): Promise<T> {
    if (event.processed) {
      return event.ok ? Promise.resolve(event.value as T) : Promise.reject(event.value);
    }
    const id = this.nextWait++;
    this.waits.set(id, what);
    this.running--;
    return new Promise<T>((resolve, reject) => {
      event.addCallback((done) => {
        this.waits.delete(id);
        this.running++;
        // The engine stops after this event, as `run(until)` does: the stream goes on now.
        this.host.returnToHost();
        if (done.ok) resolve(done.value as T);
        else reject(done.value);
      });
    });
  }

  /**
   * Runs the engine for the streams until `all` (their results) settles: each time every live
   * stream waits on the simulator, until the first awaited event is processed. Throws what the
   * engine throws (a kernel's error, `DES_DEADLOCK` naming what the streams wait for).
   */
  async drive(all: Promise<unknown>, slices: RunSlices): Promise<void> {
    const host = this.host;
    let settled = false;
    all.then(
      () => {
        settled = true;
      },
      () => {
        settled = true;
      },
    );
    for (;;) {
      await this.quiesce();
      if (this.live === 0 || settled) {
        // The last stream ended (or one threw): `all` settles within microtasks.
        while (!settled) await null;
        return;
      }
      // An event nobody triggers: the run returns when a stream's operation ends (returnToHost),
      // or throws DES_DEADLOCK when the schedule runs empty first.
      try {
        await host.run(this.env.event(), slices);
      } catch (error) {
        throw this.explain(error);
      }
    }
  }

  /** Lets streams (and held kernels) run until each waits on the simulator or has ended. */
  private async quiesce(): Promise<void> {
    const host = this.host;
    let spins = 0;
    let since = Number.NaN;
    for (;;) {
      await host.settle();
      if (this.running === 0) return;
      if (spins++ < SPIN_LIMIT) {
        await null;
        continue;
      }
      // A stream awaits something else (a file read, a timer): let macrotasks run, up to a limit.
      if (Number.isNaN(since)) since = performance.now();
      await new Promise<void>((resolve) => setTimeout(resolve, 0));
      if (performance.now() - since > HOST_WAIT_LIMIT_MS) {
        throw new KbError(
          "RUNTIME_INVALID",
          `Simulator.streams: ${this.running} stream(s) ran host code for ${HOST_WAIT_LIMIT_MS / 1000} s of wall time without awaiting the simulator (at simulated ${this.env.now} ns). A stream may await simulator operations (launch, host copies, signal.wait()), streams it starts and short host work; await a promise another stream settles with sim.waitFor(promise), or wait for another stream through a HostSignal (sim.signal()).`,
        );
      }
    }
  }

  /** A deadlock of the engine, with what each waiting stream waits for. */
  private explain(error: unknown): unknown {
    if (!(error instanceof KbError) || error.code !== "DES_DEADLOCK") return error;
    const waiting = [...this.waits.values()];
    const shown = waiting.slice(0, 8).join("; ");
    return new KbError(
      "DES_DEADLOCK",
      `${this.live} host stream(s) wait on the simulator and nothing left can end their waits (at ${this.env.now} ns): ${shown}${waiting.length > 8 ? `; and ${waiting.length - 8} more` : ""}. A signal no stream fires, or a receive no launch matches, never ends. ${error.message}`,
      { cause: error },
    );
  }
}
