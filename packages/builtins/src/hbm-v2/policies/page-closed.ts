import type { HbmPagePolicy } from "./policy.js";

/** Closed page: every run of bursts ends with an auto-precharge at the bank's earliest PRE. */
export const closedPage: HbmPagePolicy = {
  name: "closed",
  closeAfterRun: () => true,
};
