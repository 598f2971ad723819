import type { RunResults } from "@kb/runtime";
import { formatNumber, formatQuantity } from "./format.js";

// The energy section's arithmetic, without the DOM: a run's energy (the `energy` block of kb run
// --json, docs/energy.md) as headline lines, a breakdown by component kind (dynamic against
// static) and the components that spent the most.

/** A kind's (or a component's) energy, J: dynamic (the actions) plus static (leakage, standby). */
export interface EnergyPart {
  /** The kind (`hbm`, `pe_gemm`, `links`) or the component id. */
  readonly name: string;
  readonly dynamicJ: number;
  readonly staticJ: number;
  readonly totalJ: number;
}

/**
 * The run's energy by component kind (the links as `links`), most first (ties by name), kinds
 * that spent nothing left out; null for results written before energy was reported.
 */
export function energyByKind(results: Pick<RunResults, "energy">): EnergyPart[] | null {
  const energy = results.energy;
  if (energy === undefined) return null;
  return Object.entries(energy.byKind)
    .filter(([, kind]) => kind.totalJ > 0)
    .map(([name, kind]) => ({ name, dynamicJ: kind.dynamicJ, staticJ: kind.staticJ, totalJ: kind.totalJ }))
    .sort(byTotal);
}

/** The components that spent the most (at most ten, as the results list them), most first; null without energy. */
export function busiestByEnergy(results: Pick<RunResults, "energy">): EnergyPart[] | null {
  const energy = results.energy;
  if (energy === undefined) return null;
  return energy.busiest
    .map((row) => ({ name: row.id, dynamicJ: row.dynamicJ, staticJ: row.staticJ, totalJ: row.totalJ }))
    .sort(byTotal);
}

/** The names of the parts of several runs, in the order of the first run that has them, then the others'. */
export function energyNames(runs: readonly (readonly EnergyPart[])[]): string[] {
  return [...new Set(runs.flatMap((parts) => parts.map((part) => part.name)))];
}

/** One line of the energy headline: what and its value as text. */
export interface EnergyLine {
  readonly label: string;
  readonly text: string;
}

/**
 * The run's energy in words, as `kb run` prints it: total (dynamic, static), average power,
 * energy-delay product, J per token when the bench counts tokens, and the node the logic was
 * scaled to; null without energy.
 */
export function energyHeadline(results: Pick<RunResults, "energy">): EnergyLine[] | null {
  const energy = results.energy;
  if (energy === undefined) return null;
  const share = (part: number) =>
    energy.totalJ > 0 ? ` (${formatNumber((part / energy.totalJ) * 100, 3)}%)` : "";
  return [
    { label: "energy", text: formatQuantity(energy.totalJ, "J") },
    { label: "dynamic", text: `${formatQuantity(energy.dynamicJ, "J")}${share(energy.dynamicJ)}` },
    { label: "static", text: `${formatQuantity(energy.staticJ, "J")}${share(energy.staticJ)}` },
    { label: "average power", text: formatQuantity(energy.averagePowerW, "W") },
    { label: "energy-delay product", text: `${formatNumber(energy.edpJs, 4)} J s` },
    {
      label: "per token",
      text:
        energy.jPerToken === null
          ? "- (the bench counts no tokens)"
          : `${formatQuantity(energy.jPerToken, "J")} (${energy.tokens} tokens)`,
    },
    { label: "logic scaled to", text: `${energy.processNm} nm, ${energy.vddV} V` },
  ];
}

function byTotal(a: EnergyPart, b: EnergyPart): number {
  return b.totalJ - a.totalJ || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
}

/**
 * The run's energy in a phrase for a status line: `3.5 µJ, 1.75 W` and `, 12 nJ per token` when
 * the bench counts tokens; empty without energy.
 */
export function energyPhrase(results: Pick<RunResults, "energy">): string {
  const energy = results.energy;
  if (energy === undefined) return "";
  const perToken = energy.jPerToken === null ? "" : `, ${formatQuantity(energy.jPerToken, "J")} per token`;
  return `${formatQuantity(energy.totalJ, "J")}, ${formatQuantity(energy.averagePowerW, "W")}${perToken}`;
}
