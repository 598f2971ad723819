import type { Environment, Event } from "@kb/des";
import { formatSimTime, KbError } from "@kb/errors";
import type { PeCommand } from "@kb/spec";
import type { SiteCache } from "./call-site.js";
import { TLContext } from "./context.js";
import type { CommandSink, TLOptions } from "./options.js";
import { type StallBudget, type StallReport, StallTally, StallWatch } from "./stall-watch.js";
import { kernelThrew } from "./thrown.js";

/** How {@link KernelHost.run} cuts a long run into slices. */
export interface RunSlices {
  /** Events per slice (>= 1). */
  readonly events: number;
  /**
   * The engine also stops before an event later than this simulated time (ns), and `between`
   * is called at once: a time limit that stops the run at its last event within the limit.
   */
  readonly stopAfterNs?: number;
  /**
   * The engine also stops once it has processed this many events in all
   * (`env.processedEventCount`; `between` is called at once). Read at the start of each
   * {@link KernelHost.run}, after {@link RunSlices.start}.
   */
  readonly eventLimit?: number;
  /**
   * Called at the start of each {@link KernelHost.run} (one wait of the host program: a launch,
   * a copy, a synchronisation), before `eventLimit` is read: a limit per wait sets it here.
   */
  readonly start?: () => void;
  /**
   * The stall detector's budget (stall-watch.ts): once that many tl calls in a row left the
   * machine without progress, the engine stops and `between` is called at once (it should throw,
   * reading {@link KernelHost.stalled}; if it returns, counting starts again). Absent, or
   * `calls: Infinity`, no detector.
   */
  readonly stall?: StallBudget;
  /** Called between slices: may throw (a limit tripped) or await the event loop (signals, timers). */
  readonly between: () => Promise<void>;
}

/** A kernel: a plain `async` function of its `tl` and the launch's arguments. */
export type Kernel<Args extends readonly unknown[] = any[]> = (tl: TLContext, ...args: Args) => Promise<void>;

/** Microtask turns a held kernel gets before the host suspects it awaits something that is not tl. */
const SPIN_LIMIT = 10_000;

/**
 * Drives the DES while kernels run (DESIGN §4): the engine never advances while a resumed
 * kernel has not posted its next command. Runners report here when they resume a kernel
 * (`held` goes up, the running `env.run()` pauses) and when it posts or ends (`held` goes down);
 * {@link run} lets microtasks run until no kernel is held, then continues the engine.
 */
export class KernelHost {
  /** Kernels resumed that have not posted their next command, returned or thrown. */
  held = 0;
  /** Kernel instances started so far. */
  started = 0;
  /** The kernel instances started that have not returned or thrown yet, in start order. */
  readonly active = new Set<KernelRunner>();
  /** @internal The kernels' call sites, found once per path of calls (`CallSite.captureLocated`). */
  readonly sites: SiteCache = new Map();
  /** The stall detector of the run in progress (with `RunSlices.stall`), else null. */
  private watch: StallWatch<KernelRunner> | null = null;
  /** Set by {@link returnToHost}: the running {@link run} returns after the event being processed. */
  private returning = false;
  /** The first stretch number of the next watch (the runners' tallies outlive a watch). */
  private stretches = 0;

  constructor(readonly env: Environment) {}

  /**
   * What the stall detector saw when it stopped the run (`RunSlices.stall`): the tl calls made
   * without progress, since when, and the kernels that made them with their last calls; null
   * while no stall was detected.
   */
  stalled(): StallReport<KernelRunner> | null {
    return this.watch?.tripped ?? null;
  }

  /**
   * From an event's callback: the running {@link run} returns (with `undefined`) right after the
   * event being processed, as it does after `until`, so the host program goes on at this
   * simulated time; the schedule is untouched. Host streams use it (`Simulator.streams`: a stream
   * whose operation ended goes on before any later event). Outside `run` it does nothing.
   */
  returnToHost(): void {
    if (!this.env.isRunning) return;
    this.returning = true;
    this.env.pause();
  }

  /**
   * Runs the simulation until `until` is processed, letting held kernels continue in between.
   * With `slices`, the engine also stops every `slices.events` events and awaits
   * `slices.between()` (which may check limits and throw, or let the event loop run) before it
   * goes on; the simulation is the same with or without. With `slices.stall`, a stall detector
   * counts the kernels' calls (stall-watch.ts): when it trips, the engine stops and `between` is
   * called at once.
   *
   * Throws what the simulation throws (a kernel's error, `DES_DEADLOCK` with the waiting
   * processes when nothing can complete `until`) and what `between` throws. Returns `undefined`
   * early when an event's callback calls {@link returnToHost}.
   */
  async run<T>(until: Event<T>, slices?: RunSlices): Promise<T> {
    this.returning = false;
    const env = this.env;
    // One options object for every env.run of this call (a kernel pauses the engine at every
    // command it posts, so a slice spans many env.run calls).
    const options =
      slices === undefined
        ? undefined
        : { maxEvents: 1, stopAfterNs: slices.stopAfterNs ?? Number.POSITIVE_INFINITY };
    slices?.start?.();
    const eventLimit = slices?.eventLimit ?? Number.POSITIVE_INFINITY;
    const stall = slices?.stall;
    const watch =
      stall !== undefined && stall.calls < Number.POSITIVE_INFINITY
        ? new StallWatch(stall, () => env.now, this.active, this.stretches)
        : null;
    this.watch = watch;
    let sliceStart = env.processedEventCount;
    try {
      for (;;) {
        await this.settle();
        if (slices === undefined || options === undefined) {
          env.run(until);
        } else {
          // A call that tripped the stall detector paused the engine: the check throws (or goes on).
          if (watch?.tripped != null) {
            sliceStart = env.processedEventCount;
            await slices.between();
            watch.restart();
          }
          const done = env.processedEventCount;
          options.maxEvents = Math.max(1, Math.min(slices.events - (done - sliceStart), eventLimit - done));
          env.run(until, options);
        }
        if (until.processed) {
          if (!until.ok) throw until.value;
          return until.value as T;
        }
        if (this.returning) {
          this.returning = false;
          return undefined as T;
        }
        if (slices === undefined || options === undefined) continue;
        const done = env.processedEventCount;
        if (env.peek() > options.stopAfterNs || done >= eventLimit || done - sliceStart >= slices.events) {
          sliceStart = done;
          await slices.between();
        }
      }
    } finally {
      if (watch !== null) this.stretches = watch.nextStretch;
      this.watch = null;
    }
  }

  /** Lets held kernels run until each has posted, returned or thrown. */
  async settle(): Promise<void> {
    let spins = 0;
    while (this.held > 0) {
      if (spins++ < SPIN_LIMIT) {
        await null;
        continue;
      }
      // A kernel still has not posted after many microtask turns: give macrotasks one chance
      // (an `await` on a real timer or I/O), then give up with a clear error.
      await nextMacrotask();
      if (this.held > 0) {
        throw new KbError(
          "KERNEL_FAILED",
          `${this.held} kernel(s) neither posted a tl command nor returned: a kernel awaited something that is not a tl call (a timer, I/O, an unresolved promise). Kernels may await only tl calls and async functions that await tl calls.`,
          { context: { simTimeNs: this.env.now } },
        );
      }
      spins = 0;
    }
  }

  /** @internal */
  _resumed(): void {
    this.held++;
    this.env.pause();
  }

  /** @internal */
  _posted(): void {
    this.held--;
  }

  /** @internal A kernel posted `command` (from the tl call in flight): counted by the stall detector. */
  _issued(runner: KernelRunner, command: PeCommand): void {
    if (this.watch?.posted(runner, runner.tl._callInFlight(), command)) this.env.pause();
  }
}

/** Options of a {@link KernelRunner}. */
export interface KernelRunnerOptions extends TLOptions {
  /** Records every command the kernel issues (to compare with command-list mode). */
  readonly record?: PeCommand[];
  /**
   * Refuses `tl.send` / `tl.recv` (and every other IPCQ command) with this reason: the call fails
   * with `TL_INVALID_CALL` at its line in the kernel. Set by launches whose programs do not own
   * their PE's queues (`@kb/runtime`'s logical grids); absent, IPCQ commands run.
   */
  readonly ipcqRefusal?: string;
}

type RunnerState = "new" | "running" | "done";

/**
 * Runs one kernel invocation on one PE (ADR-0020 D3, the greenlet bridge as async/await). It is
 * the PE_CPU's command source (the machine's `CommandSource`, which `@kb/runtime` hands it to the
 * PE_CPU as; tl names only the vocabulary, not the machine): the PE_CPU asks for the next
 * command, the runner resumes the kernel with the previous command's result and answers with the
 * command the kernel posts next. It never logs ops (the components' hooks do) and never times
 * anything itself.
 */
export class KernelRunner {
  readonly name: string;
  readonly tl: TLContext;
  /** @internal Its calls since the machine last made progress (the host's stall detector). */
  readonly stallTally = new StallTally();
  private state: RunnerState = "new";
  /** Commands issued so far (program positions). */
  private issued = 0;
  /** Posted by the kernel and not yet taken by the PE_CPU. */
  private posted: PeCommand | null = null;
  /** Taken by the PE_CPU; its promise resolves on the next `next()`. */
  private inFlight: (() => void) | null = null;
  /** The PE_CPU waits on this for the next command. */
  private waiting: Event<PeCommand | null> | null = null;
  /** The kernel ended (returned) or failed. */
  private ended = false;
  private failure: KbError | null = null;
  private readonly record: PeCommand[] | null;
  private readonly ipcqRefusal: string | null;
  /** Simulated time the kernel posted its last command. */
  private postedAtNs = 0;

  constructor(
    private readonly host: KernelHost,
    private readonly kernel: Kernel,
    private readonly args: readonly unknown[],
    options: KernelRunnerOptions,
  ) {
    this.name = options.kernel;
    this.record = options.record ?? null;
    this.ipcqRefusal = options.ipcqRefusal ?? null;
    const sink: CommandSink = {
      runner: true,
      now: () => host.env.now,
      issue: (command) => this.post(command),
      sites: host.sites,
    };
    this.tl = new TLContext(options, sink);
  }

  next(): PeCommand | null | Event<PeCommand | null> {
    const env = this.host.env;
    if (this.state === "new") {
      this.state = "running";
      this.host.started++;
      this.host.active.add(this);
      this.host.held++;
      let promise: Promise<void>;
      try {
        promise = Promise.resolve(this.kernel(this.tl, ...this.args));
      } catch (error) {
        promise = Promise.reject(error);
      }
      promise.then(
        () => this.onReturn(),
        (error: unknown) => this.onThrow(error),
      );
    } else if (this.inFlight !== null) {
      const resume = this.inFlight;
      this.inFlight = null;
      this.stallTally.lastPending = false;
      // A kernel that already returned (without awaiting its last call) is not resumed.
      if (!this.ended) this.host._resumed();
      resume();
    }
    if (this.failure !== null) throw this.failure;
    if (this.posted !== null) return this.take();
    if (this.ended) return null;
    this.waiting = env.event<PeCommand | null>();
    // The kernel continues in a microtask: leave the engine so the host can let it run.
    env.pause();
    return this.waiting;
  }

  private take(): PeCommand {
    const command = this.posted as PeCommand;
    this.posted = null;
    return command;
  }

  /** The kernel's tl call posts a command; resolves when the PE_CPU asks for the next one. */
  private post(command: PeCommand): { index: number; done: Promise<void> } {
    if (this.posted !== null || this.inFlight !== null) {
      throw this.tl._error(
        "KERNEL_FAILED",
        `issued ${command.kind} while an earlier tl call was still in flight: await every tl call before making the next one.`,
      );
    }
    if (this.state === "done") {
      throw this.tl._error("KERNEL_FAILED", `issued ${command.kind} after the kernel returned.`);
    }
    if (this.ipcqRefusal !== null && (command.kind === "ipcq_send" || command.kind === "ipcq_recv")) {
      throw this.tl._error(
        "TL_INVALID_CALL",
        `an IPCQ ${command.kind === "ipcq_send" ? "send" : "receive"} is refused here: ${this.ipcqRefusal}`,
      );
    }
    this.record?.push(command);
    this.host._issued(this, command);
    this.postedAtNs = this.host.env.now;
    const index = this.issued++;
    const done = new Promise<void>((resolve) => {
      this.inFlight = resolve;
    });
    this.host._posted();
    const waiting = this.waiting;
    if (waiting !== null) {
      this.waiting = null;
      waiting.succeed(command);
    } else {
      this.posted = command;
    }
    return { index, done };
  }

  /**
   * What the kernel is at, for reports of a run stopped early or deadlocked: `sip0.cube0.pe1:
   * kernel k, tl.recv("west") at k.ts:12:5 (since t=120 ns)` (the pending call with its key
   * arguments: the direction of a send or receive, the handle of a wait), or `... between tl
   * calls` while it computes on the host.
   */
  describeWait(): string {
    const site = this.tl._callInFlight();
    const at =
      site === null
        ? "between tl calls"
        : `${site.describe()} (since t=${formatSimTime(this.postedAtNs)} ns)`;
    return `${this.tl.placement.pe}: kernel ${this.name}, ${at}`;
  }

  private onReturn(): void {
    // A kernel that returned with a tl call failed or still in flight (a missing await) fails:
    // its results would be incomplete, and the error must not surface as an unhandled rejection.
    const error = this.tl._endError();
    if (error !== null) {
      this.onThrow(error);
      return;
    }
    this.state = "done";
    this.ended = true;
    this.host.active.delete(this);
    this.host._posted();
    this.finish(null);
  }

  private onThrow(error: unknown): void {
    this.state = "done";
    this.ended = true;
    this.host.active.delete(this);
    this.host._posted();
    this.failure = kernelThrew(this.tl, error);
    const waiting = this.waiting;
    if (waiting !== null) {
      this.waiting = null;
      waiting.fail(this.failure);
    }
  }

  private finish(value: null): void {
    const waiting = this.waiting;
    if (waiting !== null) {
      this.waiting = null;
      waiting.succeed(value);
    }
  }
}

/**
 * Resolves after one macrotask turn, in a browser as on Node (`setImmediate` is Node's only;
 * `setTimeout(0)` is clamped to 1 ms and more in browsers). A message posted to a fresh
 * `MessageChannel` arrives as a task of its own; closing the port lets Node exit.
 */
function nextMacrotask(): Promise<void> {
  return new Promise<void>((resolve) => {
    // Typed by hand: the package's lib has neither the DOM's MessagePort nor Node's `onmessage`.
    const channel = new MessageChannel() as unknown as { port1: MessagePortLike; port2: MessagePortLike };
    channel.port1.onmessage = () => {
      channel.port1.close();
      resolve();
    };
    channel.port2.postMessage(null);
  });
}

/** What a `MessagePort` of the browser and of Node both have. */
interface MessagePortLike {
  onmessage: ((event: unknown) => void) | null;
  postMessage(message: unknown): void;
  close(): void;
}
