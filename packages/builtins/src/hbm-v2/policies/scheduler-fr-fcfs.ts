import type { HbmSchedulerPolicy } from "./policy.js";

/**
 * FR-FCFS (first ready, first come first served; Ramulator's `FRFCFS`, the default): every
 * queued run is a candidate, the earliest command issues first, row hits (column commands)
 * before row commands at equal times, then the oldest.
 */
export const frFcfs: HbmSchedulerPolicy = {
  name: "fr_fcfs",
  inOrder: false,
  rowHitCap: Number.POSITIVE_INFINITY,
};
