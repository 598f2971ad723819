/**
 * The limits of a sweep spec and of `kb sweep`, checked when the spec is parsed (and again where a
 * value is used), so that a value out of range is a located error, never a silent wrap-around.
 */
export const SWEEP_LIMITS = Object.freeze({
  /**
   * `run.timeoutS`, s: the longest timer Node can set is 2^31 - 1 ms (about 24.8 days); a longer
   * one fires after 1 ms, which killed every point at once.
   */
  maxTimeoutS: Math.floor((2 ** 31 - 1) / 1000),
  /** `run.memoryMb`, MB: a point's heap, from 64 MB to 1 TiB. */
  minMemoryMb: 64,
  maxMemoryMb: 2 ** 20,
  /** `run.maxEvents` and `run.maxSimTimeNs`: whole events, and ns, exact as doubles. */
  maxEvents: Number.MAX_SAFE_INTEGER,
  maxSimTimeNs: Number.MAX_SAFE_INTEGER,
  /**
   * Points of a design (a grid's product of axis lengths, a random or Latin-hypercube design's
   * `points`): each point is planned in memory and run as a process, so 100 000 points is more
   * than a day of one-second runs on a large machine. The shipped sweeps have 8 and 27.
   */
  maxDesignPoints: 100_000,
  /** A design's seed: the generator has 32 bits of state, so larger seeds would repeat smaller ones. */
  maxSeed: 2 ** 32 - 1,
  /** `kb sweep --jobs`: points at once on this machine. */
  maxJobs: 1024,
});

/**
 * The wall-time limit of a point in ms for `setTimeout`, or `null` when `timeoutS` is out of
 * range (not a number above 0 and at most {@link SWEEP_LIMITS}.maxTimeoutS).
 */
export function timeoutMs(timeoutS: number): number | null {
  return timeoutS > 0 && timeoutS <= SWEEP_LIMITS.maxTimeoutS ? Math.round(timeoutS * 1000) : null;
}
