import { KbError } from "@kb/errors";
import type { Tensor } from "@kb/tensor";
import type { BenchCheck, BenchOutcome } from "./bench.js";

// Progress of the host references `--verify` computes (wall time: the reporting layer only, never
// the simulation).

/**
 * What a bench check's `reference` receives: where to say how far it got. `verifyOutcome` alone
 * passes none; {@link withReferenceProgress} passes one to every reference it wraps.
 */
export interface ReferenceContext {
  /**
   * Reports that `fraction` (0 to 1) of this reference is computed. Call it as often as is
   * convenient (after each block of rows): listeners are throttled. A fraction below an earlier
   * one is ignored, so progress never goes back. Throws `RUNTIME_INVALID` for a value that is not
   * a number in [0, 1]. It needs no `this`: pass it on as a callback (`matmul(a, b, dtype,
   * context?.progress)`).
   */
  readonly progress: (fraction: number) => void;
}

/** One report of {@link withReferenceProgress}: how far the reference of one check is. */
export interface ReferenceProgress {
  /** The check's name (its key in `BenchOutcome.check`). */
  readonly check: string;
  /** Its position among the outcome's checks, from 0. */
  readonly index: number;
  /** How many checks the outcome has. */
  readonly count: number;
  /** Fraction of this reference computed, 0 to 1; nondecreasing from report to report. */
  readonly fraction: number;
  /** Wall time since this reference started, ms. */
  readonly elapsedMs: number;
  /**
   * Estimated wall time left, ms: `elapsedMs / fraction * (1 - fraction)` (the rate so far);
   * null while `fraction` is 0.
   */
  readonly etaMs: number | null;
  /** True for the last report of a check, once its reference returned (`fraction` is then 1). */
  readonly done: boolean;
}

/** Options of {@link withReferenceProgress}. */
export interface ReferenceProgressOptions {
  /**
   * Least wall time between two reports of one check, ms. Default 100 (at most ten a second).
   * The first (fraction 0) and the last (`done`) reports of each check are always made.
   */
  readonly intervalMs?: number;
  /** The wall clock, ms. Default `performance.now`. */
  readonly clock?: () => number;
}

/**
 * The outcome with each check's `reference` wrapped to report its progress to `onProgress`:
 * fraction 0 when it starts, what the reference reports through its {@link ReferenceContext}
 * (throttled to one report per `intervalMs`), and a `done` report with fraction 1 when it
 * returns (or its promise resolves). A reference that reports nothing still gets the first and
 * the last. A synchronous reference stays synchronous; the reports are made from inside it, so a
 * listener that prints must print synchronously (a terminal's `process.stderr` does).
 *
 * **When to use**: around `verifyOutcome`, to show how far the references are (`kb run --verify`
 * shows `gemm: reference C.sip0.cube0, 37%, ETA 12 s` on a terminal), or to time them: the `done`
 * report's `elapsedMs` is the reference's wall time.
 *
 * **Gotchas**: checks that share one reference (the benches' row checks compute the whole output
 * once, on first use) report its progress under the first check; the others are done at once. A
 * context passed to a wrapped reference (wrapping twice) gets the same fractions too.
 */
export function withReferenceProgress(
  outcome: BenchOutcome | undefined,
  onProgress: (progress: ReferenceProgress) => void,
  options: ReferenceProgressOptions = {},
): BenchOutcome | undefined {
  if (outcome?.check === undefined) return outcome;
  const intervalMs = options.intervalMs ?? 100;
  const clock = options.clock ?? (() => performance.now());
  const entries = Object.entries(outcome.check);
  const check: Record<string, BenchCheck> = {};
  entries.forEach(([name, original], index) => {
    const where = { check: name, index, count: entries.length };
    check[name] = {
      ...original,
      reference: (outer?: ReferenceContext) => {
        const reporter = new Reporter(where, onProgress, intervalMs, clock, outer);
        const result = original.reference(reporter.context);
        if (isPromiseLike(result)) {
          return Promise.resolve(result).then((tensor) => {
            reporter.done();
            return tensor;
          });
        }
        reporter.done();
        return result;
      },
    };
  });
  return { ...outcome, check };
}

/** The progress of one reference call. */
class Reporter {
  readonly context: ReferenceContext;
  private readonly startMs: number;
  private fraction = 0;
  private shownMs: number;

  constructor(
    private readonly where: Pick<ReferenceProgress, "check" | "index" | "count">,
    private readonly onProgress: (progress: ReferenceProgress) => void,
    private readonly intervalMs: number,
    private readonly clock: () => number,
    outer: ReferenceContext | undefined,
  ) {
    this.startMs = clock();
    this.shownMs = this.startMs;
    this.context = {
      progress: (fraction: number) => {
        this.progress(fraction);
        outer?.progress(fraction);
      },
    };
    this.report(this.startMs, false);
  }

  done(): void {
    this.fraction = 1;
    this.report(this.clock(), true);
  }

  private progress(fraction: number): void {
    if (typeof fraction !== "number" || !(fraction >= 0 && fraction <= 1)) {
      throw new KbError(
        "RUNTIME_INVALID",
        `reference of check "${this.where.check}": progress(${String(fraction)}) is not a fraction; pass a number from 0 (nothing computed) to 1 (all of it).`,
      );
    }
    if (fraction <= this.fraction) return;
    this.fraction = fraction;
    const now = this.clock();
    if (now - this.shownMs >= this.intervalMs) this.report(now, false);
  }

  private report(now: number, done: boolean): void {
    this.shownMs = now;
    const elapsedMs = now - this.startMs;
    const fraction = this.fraction;
    this.onProgress({
      ...this.where,
      fraction,
      elapsedMs,
      etaMs: fraction > 0 ? (elapsedMs / fraction) * (1 - fraction) : null,
      done,
    });
  }
}

/** Whether a reference's result is a promise (an async reference). */
export function isPromiseLike(value: Tensor | Promise<Tensor>): value is Promise<Tensor> {
  return typeof (value as { then?: unknown }).then === "function";
}
