import type { PeCommand } from "@kb/spec";
import type { CallSite } from "./call-site.js";

// The stall detector (issue 32, item 6): a kernel that loops without end on tl.cycles, tl.wait or
// another call that does no work keeps the engine busy for hours before an event cap stops it.
// The watch counts the tl calls of all kernels since the machine last made progress, and trips
// once they reach a budget. It counts calls and reads counters of the simulation, never a clock:
// the same run trips at the same call every time.

/** What {@link StallWatch} is given by the run: its budget and how to read the machine's progress. */
export interface StallBudget {
  /**
   * tl calls in a row, of all kernels together, that may leave the machine without progress
   * before the run stalls (>= 1).
   */
  readonly calls: number;
  /**
   * A number that changes whenever the machine makes progress: a component processed a message (a
   * byte moved, an op computed, a packet passed through a queue). Read every
   * {@link StallWatch.checkEvery} calls.
   */
  readonly progress: () => number;
}

/** A kernel that made calls during a stall: its calls and the last few calls it made. */
export interface StalledKernel<Kernel> {
  readonly kernel: Kernel;
  /** Its tl calls during the stall. */
  readonly calls: number;
  /** Its last calls (up to {@link RECENT_CALLS}, oldest first), described as in messages. */
  readonly recent: readonly { readonly site: CallSite | null; readonly command: PeCommand }[];
}

/** What a tripped watch saw. */
export interface StallReport<Kernel> {
  /** tl calls of all kernels since the machine last made progress. */
  readonly calls: number;
  /** Simulated time of the check that last saw progress, ns. */
  readonly sinceNs: number;
  /** The kernels that made those calls, most calls first (then in start order). */
  readonly kernels: readonly StalledKernel<Kernel>[];
}

/** Calls a {@link StallTally} remembers: enough to name every call of a short loop. */
export const RECENT_CALLS = 4;

/**
 * Commands that do work of bounded duration (a copy or a computation): while one is in flight,
 * the machine is making progress even if no message completed since the last check.
 */
const WORKING: ReadonlySet<PeCommand["kind"]> = new Set([
  "dma",
  "gemm",
  "math",
  "composite_gemm",
  "composite_math",
]);

/** One kernel's calls in the current stretch without progress (kept by its runner). */
export class StallTally {
  /** The stretch these counts belong to ({@link StallWatch}'s `stretch`). */
  stretch = -1;
  calls = 0;
  readonly sites: (CallSite | null)[] = new Array<CallSite | null>(RECENT_CALLS).fill(null);
  readonly commands: (PeCommand | null)[] = new Array<PeCommand | null>(RECENT_CALLS).fill(null);
  /** The command the kernel posted last, and whether it is still being carried out. */
  last: PeCommand | null = null;
  lastPending = false;
}

/**
 * Counts the calls kernels post and trips when `budget.calls` of them in a row came with no
 * progress of the machine: no new call that does work (a load, a store, a compute op), no such
 * call in flight, and no change of `budget.progress()`. A loop at zero simulated time trips it
 * as well (nothing progresses while time stands still).
 *
 * The cost per call is a few comparisons; `progress()` is read every {@link checkEvery} calls
 * (an eighth of the budget), so the watch trips between `calls` and `calls + checkEvery` calls
 * after the last progress.
 */
export class StallWatch<Kernel extends { readonly stallTally: StallTally }> {
  /** Calls between two reads of the machine's progress. */
  readonly checkEvery: number;
  /** Calls posted since the watch started. */
  private calls = 0;
  /** `calls` when the current stretch without progress began. */
  private stretchStart = 0;
  private stretchStartNs: number;
  /** Numbers the stretches, so a tally from an earlier one is reset on its kernel's next call. */
  private stretch: number;
  private nextCheck: number;
  private mark: number;
  private report: StallReport<Kernel> | null = null;

  constructor(
    private readonly budget: StallBudget,
    /** Simulated time now, ns. */
    private readonly now: () => number,
    /** The kernels running, in start order. */
    private readonly active: ReadonlySet<Kernel>,
    /** A stretch number no tally holds yet (tallies outlive a watch). */
    firstStretch: number,
  ) {
    this.checkEvery = Math.max(1, Math.floor(budget.calls / 8));
    this.nextCheck = this.checkEvery;
    this.mark = budget.progress();
    this.stretch = firstStretch;
    this.stretchStartNs = now();
  }

  /** The next stretch number for a later watch. */
  get nextStretch(): number {
    return this.stretch + 1;
  }

  /** What the watch saw when it tripped; null while the run makes progress. */
  get tripped(): StallReport<Kernel> | null {
    return this.report;
  }

  /**
   * Counts a call of `kernel` (`site` the tl call, `command` what it posted); returns true when
   * this call tripped the watch.
   */
  posted(kernel: Kernel, site: CallSite | null, command: PeCommand): boolean {
    const tally = kernel.stallTally;
    tally.last = command;
    tally.lastPending = true;
    const calls = ++this.calls;
    if (WORKING.has(command.kind)) {
      this.restart();
      return false;
    }
    if (tally.stretch !== this.stretch) {
      tally.stretch = this.stretch;
      tally.calls = 0;
      tally.sites.fill(null);
      tally.commands.fill(null);
    }
    const slot = tally.calls++ % RECENT_CALLS;
    tally.sites[slot] = site;
    tally.commands[slot] = command;
    if (calls < this.nextCheck || this.report !== null) return false;
    this.nextCheck = calls + this.checkEvery;
    const progress = this.budget.progress();
    if (progress !== this.mark || this.working()) {
      this.mark = progress;
      this.restart();
      return false;
    }
    if (calls - this.stretchStart < this.budget.calls) return false;
    this.report = { calls: calls - this.stretchStart, sinceNs: this.stretchStartNs, kernels: this.stalled() };
    return true;
  }

  /** Starts counting again (after a front end chose to go on past a stall). */
  restart(): void {
    this.stretch++;
    this.stretchStart = this.calls;
    this.stretchStartNs = this.now();
    this.report = null;
  }

  /** A kernel is carrying out a command that does work. */
  private working(): boolean {
    for (const kernel of this.active) {
      const tally = kernel.stallTally;
      if (tally.lastPending && tally.last !== null && WORKING.has(tally.last.kind)) return true;
    }
    return false;
  }

  private stalled(): StalledKernel<Kernel>[] {
    const found: StalledKernel<Kernel>[] = [];
    for (const kernel of this.active) {
      const tally = kernel.stallTally;
      if (tally.stretch !== this.stretch || tally.calls === 0) continue;
      const recent: { site: CallSite | null; command: PeCommand }[] = [];
      const count = Math.min(tally.calls, RECENT_CALLS);
      for (let i = tally.calls - count; i < tally.calls; i++) {
        const command = tally.commands[i % RECENT_CALLS];
        if (command != null) recent.push({ site: tally.sites[i % RECENT_CALLS] ?? null, command });
      }
      found.push({ kernel, calls: tally.calls, recent });
    }
    // Stable: kernels with equal counts stay in start order.
    return found.sort((a, b) => b.calls - a.calls);
  }
}
