/// <reference lib="dom" />
import type { EChartsType } from "echarts/core";
import type { WebResults } from "./api.js";
import { fillSelect } from "./dom.js";
import { renderRoofline } from "./roofline-chart.js";
import { type RooflineLaunch, rooflineLaunches, rooflineView } from "./roofline-model.js";

// The roofline of each launch on the results page (kb web, the playground), and A against B in
// its comparison: the sections' markup and their wiring. page.ts calls these.

/** The roofline section (after the summary). */
export const ROOFLINE_SECTION_HTML = `
<section id="roofline">
  <h2>Roofline per launch</h2>
  <div class="controls">
    <label>Results <select id="roofline-results"></select></label>
    <label>Launch <select id="roofline-launch"></select></label>
  </div>
  <p class="hint">Log-log: FLOP/s against FLOP per byte. Dashed lines are the peaks of the engines the launch used (PE_GEMM per input dtype, PE_MATH), solid ones the HBM bandwidth and the busiest link's; the launch is drawn at its actual HBM traffic (circle), its minimal traffic (each byte once, diamond) and the busiest link's bytes (triangle).</p>
  <p class="note" id="roofline-note" hidden></p>
  <div id="chart-roofline" class="chart"></div>
</section>
`;

/** The comparison's roofline: A's and B's launch at the same position, on one chart. */
export const COMPARE_ROOFLINE_HTML = `
<div id="compare-roofline-wrap">
  <h3>Roofline, A and B <label>launch <select id="compare-roofline-launch"></select></label></h3>
  <div id="compare-roofline" class="chart"></div>
</div>
`;

type Find = <T extends HTMLElement = HTMLElement>(id: string) => T;
type Keep = (id: string, chart: EChartsType) => void;

const NO_DATA = "No roofline: results written by kb run --json of this version carry one per launch.";
const NO_FLOPS =
  "This launch did no arithmetic (0 FLOPs): it has no point on the roofline, only its ceilings and slopes.";

/** Draws the roofline section: a launch of a results file, chosen in its selects. */
export function showRooflines(element: Find, results: readonly WebResults[], keep: Keep): void {
  const resultsSelect = element<HTMLSelectElement>("roofline-results");
  const launchSelect = element<HTMLSelectElement>("roofline-launch");
  const chartElement = element("chart-roofline");
  const note = element("roofline-note");
  fillSelect(
    resultsSelect,
    results.map((entry) => entry.label),
    0,
  );
  let launches: RooflineLaunch[] = [];
  const draw = () => {
    const chosen = launches[Number(launchSelect.value)];
    chartElement.hidden = chosen === undefined;
    note.textContent = chosen === undefined ? NO_DATA : chosen.roofline.points.length === 0 ? NO_FLOPS : "";
    note.hidden = note.textContent === "";
    if (chosen === undefined) return;
    const chart = renderRoofline(
      chartElement,
      rooflineView([{ name: chosen.label, roofline: chosen.roofline }]),
    );
    chart.resize();
    keep("chart-roofline", chart);
  };
  const choose = (index: number) => {
    const entry = results[index];
    launches = entry === undefined ? [] : rooflineLaunches(entry.results);
    fillSelect(
      launchSelect,
      launches.map((launch) => launch.label),
      0,
    );
    draw();
  };
  resultsSelect.addEventListener("change", () => choose(Number(resultsSelect.value)));
  launchSelect.addEventListener("change", draw);
  choose(0);
}

/** Draws A's and B's launch at the chosen position on one chart (launches matched by position). */
export function compareRooflines(element: Find, a: WebResults, b: WebResults, keep: Keep): void {
  const select = element<HTMLSelectElement>("compare-roofline-launch");
  const chartElement = element("compare-roofline");
  const ofA = rooflineLaunches(a.results);
  const ofB = rooflineLaunches(b.results);
  const positions = [...new Set([...ofA, ...ofB].map((launch) => launch.index))].sort((x, y) => x - y);
  const labelOf = (index: number) =>
    ofA.find((launch) => launch.index === index)?.label ??
    ofB.find((launch) => launch.index === index)?.label ??
    "";
  const previous = Number(select.value);
  fillSelect(
    select,
    positions.map(labelOf),
    Number.isInteger(previous) && previous < positions.length ? previous : 0,
  );
  const draw = () => {
    const position = positions[Number(select.value)];
    const entries = [
      { name: `A ${a.label}`, launch: ofA.find((launch) => launch.index === position) },
      { name: `B ${b.label}`, launch: ofB.find((launch) => launch.index === position) },
    ].flatMap(({ name, launch }) => (launch === undefined ? [] : [{ name, roofline: launch.roofline }]));
    chartElement.hidden = entries.length === 0;
    if (entries.length === 0) return;
    const chart = renderRoofline(chartElement, rooflineView(entries));
    chart.resize();
    keep("compare-roofline", chart);
  };
  select.onchange = draw;
  draw();
}
