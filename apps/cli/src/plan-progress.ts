import type { HostPlan } from "@kb/runtime";
import type { RunProgress } from "@kb/runtime/node";
import { formatWallMs, groupDigits } from "./format-run.js";

// The host program's plan (`sim.progress(done, total, label)`) on kb run's progress line, with
// the estimate of the wall time left (`PlanEstimate` of @kb/runtime, fed the display's clock).

/**
 * `layer 3/32 · launch qkv-proj 2/9 · 23% · ETA 4 min`: the label (the position as the host
 * program states it; `3 of 11` without one), the percent of the plan's steps done (rounded down)
 * and the estimate once known, none once done.
 */
export function planText(plan: HostPlan, etaMs: number | null): string {
  const position =
    plan.label === null || plan.label === ""
      ? `${groupDigits(plan.done)} of ${groupDigits(plan.total)}`
      : plan.label;
  const percent = `${Math.floor((plan.done / plan.total) * 100)}%`;
  const eta = etaMs === null || plan.done >= plan.total ? "" : ` · ETA ${formatEta(etaMs)}`;
  return `${position} · ${percent}${eta}`;
}

/** A wall-time estimate as a long run wants it: `12.40 s` below a minute, `4 min`, `1 h 05 min`. */
export function formatEta(ms: number): string {
  if (ms < 59_500) return formatWallMs(ms);
  const minutes = Math.round(ms / 60_000);
  if (minutes < 60) return `${minutes} min`;
  return `${Math.floor(minutes / 60)} h ${String(minutes % 60).padStart(2, "0")} min`;
}

/**
 * kb run's plan on a pipe (a log file, CI): one plain line per step of the host program's plan,
 * `llama-layer: layer 3/32 · launch qkv-proj 2/11 · 6%`, without an ETA (a terminal's line has
 * it); nothing for a bench that states no plan.
 */
export class PlanLines {
  private shownStep: number | null = null;

  constructor(
    private readonly output: { write(text: string): unknown },
    private readonly name: string,
  ) {}

  show(progress: RunProgress): void {
    if (progress.stage !== "phase1" || progress.plan === null || progress.plan.done === this.shownStep)
      return;
    this.shownStep = progress.plan.done;
    this.output.write(`${this.name}: ${planText(progress.plan, null)}\n`);
  }
}
