import type { HbmSchedulerPolicy } from "./policy.js";

/**
 * FCFS (Ramulator 1's `FCFS`): only the oldest eligible run of each queue (the runs that opened
 * their bank; the reads or writes being served) may issue, in time order: a younger row hit
 * waits behind an older miss.
 */
export const fcfs: HbmSchedulerPolicy = {
  name: "fcfs",
  inOrder: true,
  rowHitCap: Number.POSITIVE_INFINITY,
};
