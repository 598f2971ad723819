import type { HbmSchedulerPolicy } from "./policy.js";

/** Ramulator 1's `FRFCFS_Cap` default cap: 16. */
export const DEFAULT_ROW_HIT_CAP = 16;

/**
 * FR-FCFS with a cap (FR-FCFS+Cap, Mutlu & Moscibroda, MICRO 2007; Ramulator 1's `FRFCFS_Cap`,
 * which counts every column access since the ACT): as FR-FCFS until `cap` bursts of younger row
 * hits have gone ahead of an older queued request to another row of their bank; then the older
 * request goes (it precharges the bank) and the remaining hits wait.
 */
export function frFcfsCap(cap: number = DEFAULT_ROW_HIT_CAP): HbmSchedulerPolicy {
  return { name: "fr_fcfs_cap", inOrder: false, rowHitCap: cap };
}
