/// <reference lib="dom" />
import type { EChartsType } from "echarts/core";
import type { WebResults } from "./api.js";
import { renderEnergyBars } from "./charts.js";
import {
  busiestByEnergy,
  type EnergyPart,
  energyByKind,
  energyHeadline,
  energyNames,
} from "./energy-model.js";
import { empty, table } from "./tables.js";

// The energy of each run on the results page (kb web, the playground): its headline table, its
// breakdown by component kind and its busiest components, dynamic against static. page.ts calls it.

/** The energy section (after the utilisation and bandwidth charts). */
export const ENERGY_SECTION_HTML = `
<section id="energy">
  <h2>Energy by component kind</h2>
  <p class="hint">Joules from the counters and each component's energy table (docs/energy.md; <code>energy</code> of kb run --json): dynamic (the actions: MACs, bytes, DRAM commands, messages) and static (leakage and standby power over the simulated time), beside the time above.</p>
  <div id="energy-tables" class="table-wrap"></div>
  <div class="chart-row">
    <div><h3>By kind (links as <code>links</code>)</h3><div id="chart-energy-kind" class="chart"></div></div>
    <div><h3>The components that spent the most</h3><div id="chart-energy-busiest" class="chart"></div></div>
  </div>
</section>
`;

type Find = <T extends HTMLElement = HTMLElement>(id: string) => T;
type Keep = (id: string, chart: EChartsType) => void;

const NO_ENERGY = "No energy: results written by kb run --json of this version carry it (docs/energy.md).";

/** Draws the energy section of `results` (those with energy; a note when none has any). */
export function showEnergy(element: Find, results: readonly WebResults[], keep: Keep): void {
  const withEnergy = results.filter((entry) => entry.results.energy !== undefined);
  if (withEnergy.length === 0) {
    element("energy-tables").replaceChildren(empty(NO_ENERGY));
    element("chart-energy-kind").hidden = true;
    element("chart-energy-busiest").hidden = true;
    return;
  }
  const lines = withEnergy.map((entry) => energyHeadline(entry.results) ?? []);
  element("energy-tables").replaceChildren(
    table(
      ["", ...withEnergy.map((entry) => entry.label)],
      (lines[0] ?? []).map((line, index) => [
        line.label,
        ...lines.map((column) => ({ text: column[index]?.text ?? "-", className: "num" })),
      ]),
    ),
  );
  for (const [id, pick] of [
    ["chart-energy-kind", energyByKind],
    ["chart-energy-busiest", busiestByEnergy],
  ] as const) {
    const series = withEnergy.map((entry) => ({ name: entry.label, parts: pick(entry.results) ?? [] }));
    const names = energyNames(series.map((entry): readonly EnergyPart[] => entry.parts));
    const chartElement = element(id);
    const chart = renderEnergyBars(chartElement, series, names);
    chartElement.dataset.names = names.join(" ");
    keep(id, chart);
  }
}
