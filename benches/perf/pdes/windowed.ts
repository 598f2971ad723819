/**
 * A conservative window-barrier parallel DES for the synthetic workload (synthetic.ts): each
 * partition has an `Environment` of its own; simulated time is cut into windows of the link
 * latency L, so a crossing sent in window k arrives in window k + 1 and no partition ever
 * receives anything in its past.
 *
 * Same-instant order, kept equal to the single-thread run: there a crossing is a timeout
 * scheduled when it is sent, at least L before it arrives, while every local delay is below L,
 * so at its arrival instant it is processed before every local event of that instant and its
 * effects (the token's process start, urgent) go ahead of them. Here the receiver runs its
 * engine up to the arrival instant (`run(at)` leaves that instant's events unprocessed) and
 * starts the token there, before resuming: the same order. (The single-thread run has one more
 * event per crossing, the timeout itself; the log and times do not see it.)
 */
import { Environment } from "@kb/des";
import {
  type Crossing,
  Partition,
  type SyntheticParams,
  type SyntheticResult,
  syntheticResult,
} from "./synthetic.js";

/** The single-thread reference: both partitions on one engine, crossings as timeouts. */
export function runSequential(params: SyntheticParams): SyntheticResult {
  const env = new Environment();
  const parts: Partition[] = [];
  for (const index of [0, 1]) {
    parts.push(
      new Partition(env, index, params, (crossing) => {
        env
          .timeout(crossing.at - env.now)
          .addCallback(() => (parts[1 - index] as Partition).arrive(crossing));
      }),
    );
  }
  for (const part of parts) part.start();
  env.run();
  return syntheticResult(parts);
}

/** One partition's side of the window loop. */
export class WindowedPartition {
  readonly env = new Environment();
  readonly part: Partition;
  /** Crossings sent in the current window, in send order. */
  outbox: Crossing[] = [];

  constructor(index: number, params: SyntheticParams) {
    this.part = new Partition(this.env, index, params, (crossing) => this.outbox.push(crossing));
    this.part.start();
  }

  /**
   * Runs window [start, end): the crossings that arrive in it (in send order, so in arrival
   * order), each at its instant before that instant's local events, then the rest of the
   * window. Returns this side's next event time (Infinity when its schedule is empty).
   */
  window(end: number, incoming: readonly Crossing[]): number {
    const env = this.env;
    for (const crossing of incoming) {
      if (crossing.at > env.now) env.run(crossing.at);
      this.part.arrive(crossing);
    }
    if (end > env.now) env.run(end);
    return env.peek();
  }
}

/** The next window's index: the earliest pending event or crossing, or null when none is left. */
export function nextWindow(
  linkNs: number,
  times: readonly number[],
  crossings: readonly Crossing[],
): number | null {
  let next = Math.min(...times);
  for (const crossing of crossings) next = Math.min(next, crossing.at);
  return next === Number.POSITIVE_INFINITY ? null : Math.floor(next / linkNs);
}

/**
 * Both partitions' window loops in one thread, alternating (the algorithm without threads: the
 * tests compare it with {@link runSequential}). Returns the result and the windows run.
 */
export function runWindowedInline(
  params: SyntheticParams,
  make: (index: number, params: SyntheticParams) => WindowedPartition = (index, p) =>
    new WindowedPartition(index, p),
): { result: SyntheticResult; windows: number } {
  const sides = [make(0, params), make(1, params)];
  let incoming: Crossing[][] = [[], []];
  let k: number | null = 0;
  let windows = 0;
  while (k !== null) {
    const end = (k + 1) * params.linkNs;
    const times = sides.map((side, i) => side.window(end, incoming[i] as Crossing[]));
    windows += 1;
    incoming = [(sides[1] as WindowedPartition).outbox, (sides[0] as WindowedPartition).outbox];
    for (const side of sides) side.outbox = [];
    k = nextWindow(params.linkNs, times, [...(incoming[0] as Crossing[]), ...(incoming[1] as Crossing[])]);
  }
  return { result: syntheticResult(sides.map((side) => side.part)), windows };
}
