import type { RunResults } from "@kb/runtime";
import { formatNs, formatPercent } from "./format.js";

// A run's launches as the page lists them, without the DOM: a row per kernel launch (a bench of
// 11 launches is 11 rows, not one long line of the summary), and the summary's one-line account.

/** The columns of a launches table. */
export const LAUNCH_COLUMNS = ["#", "kernel", "PEs", "start", "duration", "bound by", "its use"] as const;

/** The rows of a launches table: per launch its window, what bounds it (rule: resource) and how busy that was. */
export function launchRows(results: Pick<RunResults, "launches">): string[][] {
  return results.launches.map((launch, index) => {
    const verdict = launch.verdict;
    return [
      String(index),
      launch.name,
      String(launch.pes),
      formatNs(launch.startNs),
      formatNs(launch.endNs - launch.startNs),
      verdict === undefined
        ? (launch.boundBy ?? "-")
        : `${verdict.rule}${verdict.resource === "" ? "" : `: ${verdict.resource}`}`,
      verdict === undefined ? "-" : formatPercent(verdict.utilisation),
    ];
  });
}

/** The summary's one-line account of the launches: `11 launches, 3.2 µs in kernels (see Launches)`. */
export function launchesSummary(results: Pick<RunResults, "launches">): string {
  const count = results.launches.length;
  if (count === 0) return "(none)";
  if (count === 1) {
    const [launch] = results.launches as [RunResults["launches"][number]];
    return `${launch.name} on ${launch.pes} PE(s), ${formatNs(launch.endNs - launch.startNs)}`;
  }
  const busy = results.launches.reduce((sum, launch) => sum + (launch.endNs - launch.startNs), 0);
  return `${count} launches, ${formatNs(busy)} in kernels (see Launches)`;
}
