import { formatByteCount, formatNs, formatPercent } from "@kb/errors";
import type { RunResults } from "@kb/runtime";
import { table } from "./format-run.js";

/** `kb run --by-line`'s default number of lines per launch. */
export const DEFAULT_BY_LINE = 10;

/**
 * `kb run --by-line [N]`: per launch, its `top` kernel lines by their share of the launch's
 * program time (docs/reports.md, "By line"), with the calls made there, the programs' wait at
 * them, the engine time of their commands by kind and the bytes they moved.
 */
export function formatByLine(results: RunResults, top: number): string[] {
  const lines: string[] = [];
  results.launches.forEach((launch, index) => {
    const sites = launch.sites;
    const name = results.launches.length > 1 ? `${launch.name} (launch ${index + 1})` : launch.name;
    if (sites === undefined) {
      lines.push(`by line: ${name}: no per-line figures (results written before they were reported)`);
      return;
    }
    lines.push(
      `by line: ${name} (share of its programs' time, ${formatNs(sites.programNs)} summed over programs, spent waiting at each line's tl calls)`,
    );
    const shown = sites.lines.slice(0, top);
    if (shown.length === 0) {
      lines.push("  (no tl call issued a command)");
      return;
    }
    const rows = shown.map((site) => [
      formatPercent(site.share),
      site.line,
      `${site.calls.map((call) => `tl.${call}`).join(", ")} x${site.count}`,
      `wait ${formatNs(site.waitNs)}`,
      Object.entries(site.busyNs)
        .map(([kind, ns]) => `${kind} ${formatNs(ns)}`)
        .join(", ") || "-",
      site.bytes > 0 ? formatByteCount(site.bytes) : "-",
    ]);
    lines.push(...table([["share", "line", "calls", "wait", "engine time", "bytes"], ...rows]));
    const more = sites.lines.length - shown.length;
    if (more > 0)
      lines.push(
        `  ... and ${more} more line${more === 1 ? "" : "s"} (--by-line ${sites.lines.length} shows all)`,
      );
  });
  return lines;
}
