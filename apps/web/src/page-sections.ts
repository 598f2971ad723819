import { ENERGY_SECTION_HTML } from "./energy-section.js";
import { COMPARE_ROOFLINE_HTML, ROOFLINE_SECTION_HTML } from "./roofline-section.js";
import { TIMELINE_SECTION_HTML } from "./timeline-section.js";

// The results views' sections (ids the renderer of page.ts fills), one fragment for kb web's page
// and the playground, so neither copies the other's markup.

/** The sections of the results views, in page order: bottleneck verdicts, summary, launches, bench report, roofline, model counters, topology, charts, energy, source by line, timeline, verification, comparison. */
export const RESULTS_SECTIONS_HTML = `
<section id="verdicts">
  <h2>Bottleneck per launch</h2>
  <ul id="verdict-list" class="verdicts"></ul>
</section>

<section id="summary">
  <h2>Summary</h2>
  <p class="hint" id="files"></p>
  <div id="summary-table" class="table-wrap"></div>
</section>

<section id="launches">
  <h2>Launches</h2>
  <p class="hint">A row per kernel launch: its window, the rule and resource that bound it (the verdict above) and how busy that resource was.</p>
  <div id="launches-tables" class="table-wrap"></div>
</section>

<section id="bench-report">
  <h2>Bench report</h2>
  <p class="hint">The bench's own table (allreduce's nccl-tests sweep, alltoall's), as kb run prints it after its summary, and its series over simulated time (llama-serve's KV-cache occupancy and batch), charted.</p>
  <div id="report-tables" class="table-wrap"></div>
</section>

${ROOFLINE_SECTION_HTML}
<section id="counters">
  <h2>Model counters</h2>
  <p class="hint">What each timing model counts (its <code>stats()</code>: <code>components[].stats</code> of the results), the busiest component first; hover a counter for what it counts.</p>
  <div id="counters-tables" class="table-wrap"></div>
</section>

<section id="topology">
  <h2>Topology</h2>
  <div class="controls">
    <label>Colour by <select id="diagram-results"></select></label>
    <button type="button" id="diagram-fit">Fit</button>
  </div>
  <div class="legend-block" id="diagram-legend"></div>
  <p class="note" id="diagram-note"></p>
  <div class="diagram-wrap">
    <div id="diagram" class="diagram" role="img" aria-label="topology diagram"></div>
    <div id="diagram-info" class="diagram-info">Hover over a node or a link.</div>
  </div>
</section>

<section id="charts">
  <h2>Utilisation and bandwidth by component kind</h2>
  <div class="chart-row">
    <div><h3>Utilisation (mean over the kind's components)</h3><div id="chart-utilisation" class="chart"></div></div>
    <div><h3>Bandwidth (bytes over simulated time)</h3><div id="chart-bandwidth" class="chart"></div></div>
  </div>
  <div id="hbm-over-time-wrap">
    <h3>HBM bandwidth over time, per cube</h3>
    <p class="note">The sum of the trace's per-pseudo-channel <code>HBM GB/s</code> counters. Every HBM request, host copies (copyToDevice, fromDevice) included: a point is the mean bandwidth of the 1 µs bin of simulated time it starts (each pseudo-channel's data-bus time in the bin, times its bandwidth), summed over a cube's pseudo-channels and held until its next point. Traces written before the counter was binned sampled at answer time and draw host copies as 0.</p>
    <p class="hint" id="hbm-note"></p>
    <div id="chart-hbm-time" class="chart"></div>
  </div>
</section>

${ENERGY_SECTION_HTML}
<section id="source">
  <h2>Time by kernel line</h2>
  <div class="controls">
    <label>Launch <select id="source-launch"></select></label>
    <span class="hint">Each line's bar is its share of the launch's program time: the programs' time waiting at its tl calls (docs/reports.md, "By line"); hover a line for its wait, engine time and bytes; click it to show only its slices in the timeline below (click again to show all).</span>
  </div>
  <div id="source-view" class="table-wrap"></div>
</section>

${TIMELINE_SECTION_HTML}
<section id="verification">
  <h2>Verification</h2>
  <div id="verification-tables" class="table-wrap"></div>
</section>

<section id="comparison">
  <h2>Comparison</h2>
  <div class="controls">
    <label>A <select id="compare-a"></select></label>
    <label>B <select id="compare-b"></select></label>
  </div>
  <p class="note" id="comparison-note" hidden></p>
  <div id="comparison-body">
    <div id="comparison-table" class="table-wrap"></div>
    <div class="chart-row">
      <div><h3 id="compare-title-a">A</h3><div id="compare-chart-a" class="chart"></div></div>
      <div><h3 id="compare-title-b">B</h3><div id="compare-chart-b" class="chart"></div></div>
    </div>
    <div id="comparison-kinds" class="table-wrap"></div>
    ${COMPARE_ROOFLINE_HTML}
  </div>
</section>
`;

/** Puts the results sections into `container` (replacing what it holds). */
export function mountResultsSections(container: HTMLElement): void {
  container.innerHTML = RESULTS_SECTIONS_HTML;
}
