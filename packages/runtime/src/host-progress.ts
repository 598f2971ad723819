import { KbError } from "@kb/errors";
import { callerLocation } from "./caller-location.js";

// The host program's own plan, as it states it (`sim.progress(done, total, label)`): where a long
// run is (launch 3 of 11, size 5 of 12). Nothing of it reaches the simulation: it is passed on to
// whoever shows progress (kb run's line, the playground's status), who may add a wall-time ETA.

/** The position a host program stated last with `sim.progress`. */
export interface HostPlan {
  /** Steps done, 0 to `total`. */
  readonly done: number;
  /** Steps in the plan, above 0. */
  readonly total: number;
  /** What the steps are or which one runs now (`"layer 3"`, `"size 1 MiB"`), or null. */
  readonly label: string | null;
}

/** @internal The plan a simulator's host program stated, and who listens to it. */
export class HostProgress {
  /** Called with each position stated; set by whoever shows progress (`ProgressTap`). */
  listener: ((plan: HostPlan) => void) | null = null;
  /** The position stated last, or null before the first. */
  latest: HostPlan | null = null;

  /** Checks and passes on a position (`sim.progress`); `now` is the simulated time, for errors. */
  report(done: number, total: number, label: string | undefined, now: number): void {
    if (
      typeof total !== "number" ||
      typeof done !== "number" ||
      !(Number.isFinite(total) && total > 0) ||
      !(done >= 0 && done <= total) ||
      (label !== undefined && typeof label !== "string")
    ) {
      const where = callerLocation();
      throw new KbError(
        "RUNTIME_INVALID",
        `${where === null ? "" : `${where}: `}sim.progress(${String(done)}, ${String(total)}${label === undefined ? "" : `, ${JSON.stringify(label)}`}) is not a position in a plan: pass the steps done (0 to total), the steps in the plan (a number above 0) and optionally a label string, e.g. sim.progress(3, 11, "size 8 KiB").`,
        { context: { simTimeNs: now } },
      );
    }
    const plan = { done, total, label: label ?? null };
    this.latest = plan;
    this.listener?.(plan);
  }
}

/**
 * The wall-time estimate of a plan (a host program's, phase 2's ops): the steps done since the
 * plan was first seen over the wall time they took, times the steps left. A plan whose `total` changes or whose
 * `done` goes back starts over. The caller passes the wall time (`performance.now()` of a display):
 * nothing here reads a clock, and the simulation never calls it.
 */
export class PlanEstimate {
  private start: { readonly ms: number; readonly done: number; readonly total: number } | null = null;

  /** The estimated wall time left at `nowMs` for `plan`, ms; null until a step was done. */
  etaMs(plan: Pick<HostPlan, "done" | "total">, nowMs: number): number | null {
    const start = this.start;
    if (start === null || plan.total !== start.total || plan.done < start.done) {
      this.start = { ms: nowMs, done: plan.done, total: plan.total };
      return null;
    }
    const steps = plan.done - start.done;
    if (steps <= 0 || nowMs <= start.ms) return null;
    return ((nowMs - start.ms) / steps) * (plan.total - plan.done);
  }
}
