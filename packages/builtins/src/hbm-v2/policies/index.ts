import { adaptivePage } from "./page-adaptive.js";
import { closedPage } from "./page-closed.js";
import { openPage } from "./page-open.js";
import type { HbmPagePolicy, HbmPolicies, HbmRefreshPolicy, HbmSchedulerPolicy } from "./policy.js";
import { allBankRefresh } from "./refresh-all-bank.js";
import { noRefresh } from "./refresh-none.js";
import { perBankRefresh } from "./refresh-per-bank.js";
import { fcfs } from "./scheduler-fcfs.js";
import { frFcfs } from "./scheduler-fr-fcfs.js";
import { frFcfsCap } from "./scheduler-fr-fcfs-cap.js";

/** The scheduler each `scheduler` param value names (`cap`: `scheduler_cap`). */
export const SCHEDULERS = {
  fr_fcfs: () => frFcfs,
  fcfs: () => fcfs,
  fr_fcfs_cap: (cap: number) => frFcfsCap(cap),
} as const satisfies Record<string, (cap: number) => HbmSchedulerPolicy>;

/** The refresh policy each `refresh` param value names. */
export const REFRESH_POLICIES = {
  all_bank: allBankRefresh,
  per_bank: perBankRefresh,
  none: noRefresh,
} as const satisfies Record<string, HbmRefreshPolicy>;

/** The page policy each `page_policy` param value names. */
export const PAGE_POLICIES = {
  open: openPage,
  closed: closedPage,
  adaptive: adaptivePage,
} as const satisfies Record<string, HbmPagePolicy>;

/** The policies the params name. */
export function namedPolicies(
  scheduler: keyof typeof SCHEDULERS,
  cap: number,
  refresh: keyof typeof REFRESH_POLICIES,
  page: keyof typeof PAGE_POLICIES,
): HbmPolicies {
  return {
    scheduler: SCHEDULERS[scheduler](cap),
    refresh: REFRESH_POLICIES[refresh],
    page: PAGE_POLICIES[page],
  };
}
