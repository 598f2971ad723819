import type { HbmPagePolicy } from "./policy.js";

/**
 * Adaptive page (gem5's `close_adaptive`): after a run of bursts the row is precharged unless a
 * queued request hits it, so a burst of same-row requests shares one ACT and a lone access
 * leaves the bank closed for the next, likely different, row.
 */
export const adaptivePage: HbmPagePolicy = {
  name: "adaptive",
  closeAfterRun: (bank, row, queue) => !queue.queuedHit(bank, row),
};
