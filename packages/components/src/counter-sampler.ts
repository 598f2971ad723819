import { KbError } from "@kb/errors";

/**
 * The default sampling interval of trace counters, ns of simulated time: 1 µs, the window of the
 * `HBM GB/s` counter (bus time per 1 µs bin, so finer points add nothing there), and about a
 * thousand points per ms of simulated time per counter; queue depths keep their µs-scale shape.
 * Measured on `kb run gemm` 4096³ on ref-cube: counters went from half of the trace to a few
 * percent of it (apps/cli/README.md, "Trace size").
 */
export const DEFAULT_COUNTER_INTERVAL_NS = 1000;

/** Where the points a {@link CounterSampler} keeps go. */
export type CounterPointSink = (name: string, tNs: number, track: string, value: number) => void;

/** The state of one counter (a name on a track). */
interface CounterState {
  /** The value of the last point emitted. */
  value: number;
  /** The time of the last point emitted, ns. */
  tNs: number;
  /** A change not emitted yet (it came within the interval of the last point). */
  pending: boolean;
  pendingValue: number;
}

/**
 * Thins counter samples to a step function with at most one point per interval per counter, from
 * simulated time only (deterministic). For each counter (a name on a track):
 *
 * - the first sample is a point;
 * - a sample equal to the last point's value adds nothing (and drops a pending change: the value
 *   went back to what the plot shows);
 * - a changed value at least `intervalNs` after the last point is a point at once;
 * - a changed value sooner is pending (a later one replaces it); it becomes a point at the time the
 *   interval elapses (last point + `intervalNs`), when the next sample of that counter comes at or
 *   after it, or at {@link flush} (at the end of the run).
 *
 * So every point is a value the counter really had at that time, the last value before a gap is
 * kept, and a change is drawn at most `intervalNs` late. `intervalNs` 0 keeps every change.
 * Samples of one counter come in time order (each component draws its own tracks in time order).
 */
export class CounterSampler {
  readonly intervalNs: number;
  private readonly emit: CounterPointSink;
  /** Counters by name, then by track: two lookups and no key string per sample. */
  private readonly counters = new Map<string, Map<string, CounterState>>();

  /** Throws `MACHINE_INVALID_COMMAND` for an interval that is negative or not a finite number. */
  constructor(intervalNs: number, emit: CounterPointSink) {
    if (!(Number.isFinite(intervalNs) && intervalNs >= 0)) {
      throw new KbError(
        "MACHINE_INVALID_COMMAND",
        `the trace counter interval must be a number of ns >= 0 (0 keeps every change), got ${intervalNs}.`,
      );
    }
    this.intervalNs = intervalNs;
    this.emit = emit;
  }

  /** One sample of counter `name` on `track` at `tNs`. */
  sample(name: string, tNs: number, track: string, value: number): void {
    let byTrack = this.counters.get(name);
    if (byTrack === undefined) {
      byTrack = new Map();
      this.counters.set(name, byTrack);
    }
    const state = byTrack.get(track);
    if (state === undefined) {
      byTrack.set(track, { value, tNs, pending: false, pendingValue: 0 });
      this.emit(name, tNs, track, value);
      return;
    }
    const due = state.tNs + this.intervalNs;
    if (state.pending && tNs >= due) {
      // The pending value held from its sample until now, so also when the interval elapsed.
      this.point(name, due, track, state, state.pendingValue);
    }
    if (value === state.value) {
      state.pending = false;
    } else if (tNs >= state.tNs + this.intervalNs) {
      this.point(name, tNs, track, state, value);
    } else {
      state.pending = true;
      state.pendingValue = value;
    }
  }

  /**
   * Emits every pending change: at the time its interval elapses, or at `endNs` (the end of the
   * run) when that comes first. The sampler goes on from there if more samples come.
   */
  flush(endNs: number): void {
    for (const [name, byTrack] of this.counters) {
      for (const [track, state] of byTrack) {
        if (!state.pending) continue;
        this.point(
          name,
          Math.max(state.tNs, Math.min(state.tNs + this.intervalNs, endNs)),
          track,
          state,
          state.pendingValue,
        );
      }
    }
  }

  private point(name: string, tNs: number, track: string, state: CounterState, value: number): void {
    state.value = value;
    state.tNs = tNs;
    state.pending = false;
    this.emit(name, tNs, track, value);
  }
}
