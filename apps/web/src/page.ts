/// <reference lib="dom" />
import type { Core } from "cytoscape";
import type { EChartsType } from "echarts/core";
import type { WebData, WebResults } from "./api.js";
import { renderKindBars, renderTimeSeries, resultsColour } from "./charts.js";
import { recolourDiagram, renderDiagram } from "./diagram.js";
import { buildDiagram } from "./diagram-model.js";
import { fillSelect } from "./dom.js";
import { showEnergy } from "./energy-section.js";
import { formatNs, formatNumber } from "./format.js";
import { launchesTables, reportTables } from "./launch-tables.js";
import { diagramLegend, verdictList } from "./legend.js";
import { mountResultsSections } from "./page-sections.js";
import { showReportSeries } from "./report-series.js";
import {
  bandwidthByKind,
  compareHeadlines,
  compareKinds,
  compareLaunches,
  hbmBandwidthByCube,
  utilisationByKind,
  verdictLines,
} from "./results-model.js";
import { compareRooflines, showRooflines } from "./roofline-section.js";
import { renderSourceView, type SourceViewHandle } from "./source-view.js";
import { comparisonTable, empty, modelCountersTable, summaryTable, verificationTable } from "./tables.js";
import type { TimelineHandle, TimelineSource } from "./timeline.js";
import { showTimelines } from "./timeline-section.js";

// The results views wired to the sections of page-sections.ts: kb web's page (main.ts, its data
// from the server) and the playground (its data from a run in the browser) both draw with this.

/** What a drawn results page holds, for tests and for poking at in the console (`window.kbWeb` in kb web). */
export interface ResultsPageHandle {
  readonly data: WebData;
  /** The Cytoscape instance of the diagram. */
  diagram: Core | null;
  /** PEs drawn in the diagram. */
  peCount: number;
  /** The timeline shown, and its number of tracks. */
  timeline: TimelineHandle | null;
  trackCount: number;
  /** The source view (time by kernel line). */
  source: SourceViewHandle | null;
  /** The other charts by element id. */
  readonly charts: Map<string, EChartsType>;
  /** Stops listening and frees the charts, the diagram and the timeline (before drawing another page). */
  dispose(): void;
}

/** Options of {@link renderResultsPage}. */
export interface ResultsPageOptions {
  /** Shown in place of the comparison with fewer than two results (default: how kb web compares two files). */
  readonly comparisonHint?: string;
}

/**
 * Puts the results sections into `root` and draws `data` in them: bottleneck verdicts, summary,
 * topology diagram, charts, the timeline (its windows asked of `source`), verification and the
 * comparison of the first two results. Throws when the sections lack an element it fills.
 */
export function renderResultsPage(
  root: HTMLElement,
  data: WebData,
  source: TimelineSource,
  options: ResultsPageOptions = {},
): ResultsPageHandle {
  mountResultsSections(root);
  const element = <T extends HTMLElement = HTMLElement>(id: string): T => {
    const found = root.querySelector<T>(`#${id}`);
    if (found === null) throw new Error(`the results page has no #${id}`);
    return found;
  };
  const onResize = () => {
    handle.diagram?.resize();
    handle.timeline?.resize();
    for (const chart of handle.charts.values()) chart.resize();
  };
  const handle: ResultsPageHandle = {
    data,
    diagram: null,
    peCount: 0,
    timeline: null,
    trackCount: 0,
    source: null,
    charts: new Map(),
    dispose() {
      window.removeEventListener("resize", onResize);
      handle.timeline?.dispose();
      for (const chart of handle.charts.values()) chart.dispose();
      handle.charts.clear();
      handle.diagram?.destroy();
    },
  };
  const { results, timelines, topology } = data;

  // Summary
  element("files").textContent = [
    `topology ${topology.file}`,
    ...results.map((entry) => `results ${entry.file}`),
    ...timelines.map((timeline) => `trace ${timeline.file}`),
  ].join(" · ");
  element("summary-table").replaceChildren(
    results.length > 0
      ? summaryTable(results)
      : empty("No results file given: kb run BENCH --json > results.json, then kb web results.json."),
  );

  element("launches-tables").replaceChildren(...launchesTables(results));
  element("report-tables").replaceChildren(...reportTables(results));
  element("bench-report").hidden = !results.some((entry) => entry.results.report !== undefined);

  element("counters-tables").replaceChildren(
    ...(results.length > 0
      ? results.map(modelCountersTable)
      : [empty("Needs a results file of kb run --json.")]),
  );

  const keepChart = (id: string, chart: EChartsType) => handle.charts.set(id, chart);
  showReportSeries(element("bench-report"), results, keepChart);
  if (results.length > 0) showRooflines(element, results, keepChart);
  else element("roofline").hidden = true;

  // Topology diagram, coloured by the chosen results file.
  const diagramSelect = element<HTMLSelectElement>("diagram-results");
  fillSelect(diagramSelect, results.length > 0 ? results.map((entry) => entry.label) : ["(no results)"], 0);
  const diagramOf = (index: number) => buildDiagram(topology, results[index]?.results ?? null);
  const diagram = diagramOf(0);
  const diagramElement = element("diagram");
  const cy = renderDiagram(diagramElement, diagram, element("diagram-info"));
  handle.diagram = cy;
  handle.peCount = diagram.peCount;
  diagramElement.dataset.peCount = String(diagram.peCount);
  diagramElement.dataset.nodeCount = String(cy.nodes().length);
  diagramSelect.addEventListener("change", () => recolourDiagram(cy, diagramOf(Number(diagramSelect.value))));
  if (results.some((entry) => entry.results.topology !== topology.name)) {
    element("diagram-note").textContent = `The diagram draws topology "${topology.name}"; ${results
      .filter((entry) => entry.results.topology !== topology.name)
      .map((entry) => `${entry.label} ran on "${entry.results.topology}"`)
      .join(", ")}: its colours show only where the ids match.`;
  }
  element("diagram-fit").addEventListener("click", () => cy.fit(undefined, 24));
  const legend = element("diagram-legend");
  const showLegend = (index: number) => {
    const chosen = results[index]?.results;
    legend.replaceChildren(
      ...diagramLegend({
        results: chosen !== undefined,
        hbmPorts: chosen?.hbmPorts !== undefined,
        links: chosen?.links !== undefined,
      }),
    );
  };
  showLegend(0);
  diagramSelect.addEventListener("change", () => showLegend(Number(diagramSelect.value)));

  // The bottleneck of every launch, first thing on the page.
  const verdicts = verdictLines(results);
  element("verdict-list").replaceChildren(
    ...(verdicts.length > 0
      ? verdictList(verdicts, results.length)
      : [empty("No launches: the bottleneck verdicts come from a results file (kb run --json).")]),
  );

  // Per-kind charts over every results file.
  const chartOf = (id: string, chart: EChartsType) => {
    handle.charts.set(id, chart);
    element(id).dataset.series = String((chart.getOption().series as unknown[] | undefined)?.length ?? 0);
  };
  if (results.length > 0) {
    const seriesOf = (pick: (entry: WebResults) => ReturnType<typeof utilisationByKind>) =>
      results.map((entry) => ({ name: entry.label, values: pick(entry) }));
    chartOf(
      "chart-utilisation",
      renderKindBars(
        element("chart-utilisation"),
        seriesOf((entry) => utilisationByKind(entry.results)),
        "fraction",
      ),
    );
    chartOf(
      "chart-bandwidth",
      renderKindBars(
        element("chart-bandwidth"),
        seriesOf((entry) => bandwidthByKind(entry.results)),
        "GB/s",
      ),
    );
  } else {
    element("chart-utilisation").replaceWith(empty("Needs a results file (kb run --json)."));
    element("chart-bandwidth").replaceWith(empty("Needs a results file (kb run --json)."));
  }
  const withHbm = timelines.find((timeline) =>
    timeline.counters.some((counter) => counter.name === "HBM GB/s"),
  );
  if (withHbm !== undefined) {
    chartOf(
      "chart-hbm-time",
      renderTimeSeries(element("chart-hbm-time"), hbmBandwidthByCube(withHbm), "GB/s"),
    );
    const binNs = withHbm.counters.find((counter) => counter.binNs !== undefined)?.binNs;
    element("chart-hbm-time").dataset.endNs = String(withHbm.endNs);
    element("hbm-note").textContent =
      `${withHbm.label}: the whole run, 0 … ${formatNs(withHbm.endNs)}` +
      (binNs === undefined ? ", every sample." : `, in bins of ${formatNs(binNs)} (the mean of each bin).`);
  } else {
    element("hbm-over-time-wrap").hidden = true;
  }

  showEnergy(element, results, keepChart);

  // Timeline, and the source view whose lines filter it.
  const timelineSection = showTimelines(element, timelines, source, handle);
  handle.source = renderSourceView(
    element("source-view"),
    element<HTMLSelectElement>("source-launch"),
    results,
    data.sources ?? {},
    (line) => timelineSection.filterLine(line),
  );
  timelineSection.onLineCleared(() => handle.source?.select(null));

  // Verification
  element("verification-tables").replaceChildren(
    ...(results.length > 0
      ? results.map(verificationTable)
      : [empty("Needs a results file of kb run --verify --json.")]),
  );

  // Comparison of two results files.
  if (results.length >= 2) {
    const selectA = element<HTMLSelectElement>("compare-a");
    const selectB = element<HTMLSelectElement>("compare-b");
    const labels = results.map((entry) => entry.label);
    fillSelect(selectA, labels, 0);
    fillSelect(selectB, labels, 1);
    const compare = () => {
      const a = results[Number(selectA.value)] as WebResults;
      const b = results[Number(selectB.value)] as WebResults;
      element("comparison-table").replaceChildren(
        comparisonTable(
          [...compareHeadlines(a.results, b.results), ...compareLaunches(a.results, b.results)],
          a.label,
          b.label,
          "headline",
        ),
      );
      const topologyNote = element("comparison-note");
      topologyNote.textContent =
        a.results.topology === b.results.topology
          ? ""
          : `A ran on topology "${a.results.topology}", B on "${b.results.topology}": a comparison of two designs. The figures are compared side by side, launches matched by position; the diagram above draws "${topology.name}" only.`;
      topologyNote.hidden = topologyNote.textContent === "";
      element("comparison-kinds").replaceChildren(
        comparisonTable(compareKinds(a.results, b.results), a.label, b.label, "utilisation by kind"),
      );
      compareRooflines(element, a, b, keepChart);
      const kinds = [
        ...new Set([...utilisationByKind(a.results), ...utilisationByKind(b.results)].map((k) => k.kind)),
      ].sort();
      const max = Math.max(
        0.01,
        ...[...utilisationByKind(a.results), ...utilisationByKind(b.results)].map((kind) => kind.value),
      );
      // One scale for both sides, so bar lengths compare across the two charts.
      const scale = Math.min(1, Number(formatNumber(Math.ceil(max * 10) / 10, 2)));
      element("compare-title-a").textContent = `A: ${a.label}`;
      element("compare-title-b").textContent = `B: ${b.label}`;
      for (const [id, entry, colour] of [
        ["compare-chart-a", a, resultsColour(0)],
        ["compare-chart-b", b, resultsColour(1)],
      ] as const) {
        chartOf(
          id,
          renderKindBars(
            element(id),
            [{ name: entry.label, values: utilisationByKind(entry.results), colour }],
            "fraction",
            { kinds, max: scale },
          ),
        );
      }
    };
    selectA.addEventListener("change", compare);
    selectB.addEventListener("change", compare);
    compare();
  } else {
    element("compare-a").setAttribute("disabled", "");
    element("compare-b").setAttribute("disabled", "");
    element("comparison-body").replaceChildren(
      empty(
        options.comparisonHint ??
          "Pass two results files (two design points) to compare them side by side: kb web a.json b.json.",
      ),
    );
  }

  window.addEventListener("resize", onResize);
  return handle;
}
