import type { HostPlan } from "@kb/runtime";
import { formatWallMs, groupDigits } from "./format-run.js";

// The host program's plan (`sim.progress(done, total, label)`) on kb run's progress line, with
// the estimate of the wall time left (`PlanEstimate` of @kb/runtime, fed the display's clock).

/** `3 of 11 (size 8 KiB), ETA 12.40 s`: the position, its label and the estimate once known. */
export function planText(plan: HostPlan, etaMs: number | null): string {
  const label = plan.label === null || plan.label === "" ? "" : ` (${plan.label})`;
  const eta = etaMs === null || plan.done >= plan.total ? "" : `, ETA ${formatWallMs(etaMs)}`;
  return `${groupDigits(plan.done)} of ${groupDigits(plan.total)}${label}${eta}`;
}
