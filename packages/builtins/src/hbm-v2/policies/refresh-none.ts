import type { HbmRefreshPolicy } from "./policy.js";

/** No refresh (`refresh: none`): for isolating other effects. */
export const noRefresh: HbmRefreshPolicy = {
  name: "none",
  interval: () => Number.POSITIVE_INFINITY,
  commandTime: () => Number.POSITIVE_INFINITY,
  issue: () => true,
  idleKeep: () => 0,
};
