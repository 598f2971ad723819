import { formatNumber, formatPercent, formatQuantity as joules } from "@kb/errors";
import type { RunResults } from "@kb/runtime";

/**
 * `kb run`'s energy block (docs/energy.md): the run's total with its dynamic and static parts,
 * average power, energy-delay product and J per token when the bench counts tokens; the kinds
 * that spent most, the components that spent most, and each launch. None for results without energy.
 */
export function formatEnergy(results: Pick<RunResults, "energy" | "launches">): string[] {
  const energy = results.energy;
  if (energy === undefined) return [];
  const share = (part: number) => (energy.totalJ > 0 ? formatPercent(part / energy.totalJ) : "-");
  const kinds = Object.entries(energy.byKind)
    .filter(([, kind]) => kind.totalJ > 0)
    .sort(([a, x], [b, y]) => y.totalJ - x.totalJ || (a < b ? -1 : a > b ? 1 : 0))
    .slice(0, 6);
  const rows: [string, string][] = [
    [
      "total",
      `${joules(energy.totalJ, "J")} (dynamic ${joules(energy.dynamicJ, "J")}, static ${joules(energy.staticJ, "J")}); average ${joules(energy.averagePowerW, "W")}; energy-delay ${formatNumber(energy.edpJs, 4)} J s${energy.jPerToken === null ? "" : `; ${joules(energy.jPerToken, "J")} per token (${energy.tokens} tokens)`}`,
    ],
    [
      "by kind",
      kinds.map(([kind, part]) => `${kind} ${joules(part.totalJ, "J")} (${share(part.totalJ)})`).join(", "),
    ],
    [
      "most",
      energy.busiest
        .slice(0, 3)
        .map((row) => `${row.id} ${joules(row.totalJ, "J")}`)
        .join(", "),
    ],
  ];
  const launches = results.launches.filter((launch) => launch.energy !== undefined).slice(0, 6);
  if (launches.length > 0) {
    const more = results.launches.length - launches.length;
    rows.push([
      "launches",
      `${launches
        .map((launch) => `${launch.name} ${joules(launch.energy?.totalJ ?? 0, "J")}`)
        .join(", ")}${more > 0 ? `, ... (${more} more in --json)` : ""}`,
    ]);
  }
  const width = Math.max(...rows.map(([label]) => label.length));
  return [
    `energy (counters x the energy tables, logic at ${energy.processNm} nm and ${energy.vddV} V; docs/energy.md)`,
    ...rows.map(([label, text]) => `  ${label.padEnd(width)}  ${text}`),
  ];
}
