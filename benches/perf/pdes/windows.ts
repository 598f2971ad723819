/**
 * The window arithmetic of the parallel-DES study: partitions split over 2 threads, and the
 * work between two synchronisations of a window-barrier conservative engine.
 */

/** A way to split the partitions over 2 threads and the lookahead it leaves between them. */
export interface Strategy {
  readonly name: string;
  /** `sip`: whole SIPs (cubes and SIP level together) go to one thread; `cube`: each partition on its own. */
  readonly group: "sip" | "cube";
  /** The window width: the smallest latency of a link between the two threads' partitions, ns. */
  readonly lookaheadNs: number;
}

/**
 * The thread (0 or 1) of each partition, by longest-processing-time first over the groups'
 * event counts (ties to thread 0); partition 0 ("none": events no partition claims) gets 2.
 */
export function splitTwoThreads(
  names: readonly string[],
  events: readonly number[],
  group: "sip" | "cube",
): Int8Array {
  const groupOf = (name: string) => (group === "sip" ? (/^sip\d+/.exec(name)?.[0] ?? name) : name);
  const totals = new Map<string, number>();
  names.forEach((name, i) => {
    if (i === 0) return;
    totals.set(groupOf(name), (totals.get(groupOf(name)) ?? 0) + (events[i] ?? 0));
  });
  const load = [0, 0];
  const threadOf = new Map<string, number>();
  for (const [key, n] of [...totals.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))) {
    const thread = (load[1] as number) < (load[0] as number) ? 1 : 0;
    load[thread] = (load[thread] as number) + n;
    threadOf.set(key, thread);
  }
  const threads = new Int8Array(names.length);
  names.forEach((name, i) => {
    threads[i] = i === 0 ? 2 : (threadOf.get(groupOf(name)) as number);
  });
  return threads;
}

/** What {@link windowStats} counts. */
export interface WindowStats {
  /** Events of thread 0, thread 1, and unclaimed (partition 0). */
  readonly threadEvents: readonly [number, number, number];
  /** Windows of width L holding at least one event (one barrier each). */
  readonly windows: number;
  /** Windows where both threads have events (where 2 threads run at once). */
  readonly windowsBothBusy: number;
  /**
   * Sum over windows of the busier thread's events, the unclaimed events placed to even the two
   * threads out (optimistic): the event loop's length on 2 threads, in events.
   */
  readonly sumMax: number;
  /** Cross-partition messages, and those whose two ends are on different threads. */
  readonly cross: number;
  readonly crossBetween: number;
}

/**
 * Cuts simulated time into windows `[kL, (k+1)L)` and counts per window the events of each
 * thread. `times` must be non-decreasing (the order the engine processed them).
 */
export function windowStats(
  times: Float64Array,
  parts: Uint8Array,
  crossTimes: Float64Array,
  crossFrom: Uint8Array,
  crossTo: Uint8Array,
  threads: Int8Array,
  lookaheadNs: number,
): WindowStats {
  let events0 = 0;
  let events1 = 0;
  let eventsNone = 0;
  let windows = 0;
  let both = 0;
  let sumMax = 0;
  let window = Number.NaN;
  let a = 0;
  let b = 0;
  let none = 0;
  const flush = () => {
    if (a + b + none === 0) return;
    windows += 1;
    if (a > 0 && b > 0) both += 1;
    sumMax += Math.max(a, b, (a + b + none) / 2);
  };
  for (let i = 0; i < times.length; i++) {
    const k = Math.floor((times[i] as number) / lookaheadNs);
    if (k !== window) {
      flush();
      window = k;
      a = 0;
      b = 0;
      none = 0;
    }
    const thread = threads[parts[i] as number] as number;
    if (thread === 0) {
      a += 1;
      events0 += 1;
    } else if (thread === 1) {
      b += 1;
      events1 += 1;
    } else {
      none += 1;
      eventsNone += 1;
    }
  }
  flush();
  let between = 0;
  for (let i = 0; i < crossTimes.length; i++) {
    const x = threads[crossFrom[i] as number] as number;
    const y = threads[crossTo[i] as number] as number;
    if (x !== y && x < 2 && y < 2) between += 1;
  }
  return {
    threadEvents: [events0, events1, eventsNone],
    windows,
    windowsBothBusy: both,
    sumMax,
    cross: crossTimes.length,
    crossBetween: between,
  };
}
