/// <reference lib="dom" />
import type { WebTimeline, WebTimelineFilter } from "./api.js";
import { fillSelect } from "./dom.js";
import { formatNs } from "./format.js";
import { openInPerfetto } from "./perfetto.js";
import { empty } from "./tables.js";
import { renderTimeline, type TimelineHandle, type TimelineSource } from "./timeline.js";
import { filterLabel, normalFilter } from "./timeline-filter-model.js";
import { GROUP_BY_CHOICES, type GroupBy } from "./timeline-groups-model.js";
import { timelineLegend } from "./timeline-legend.js";

// The timeline's section: the trace chooser, "Group by", the search box, the chip of the filter
// in force (a kernel line clicked in the source view, a search) with its clear button, "Open in
// Perfetto", the legend, and the timeline itself (timeline.ts).

/** The section's markup (ids the functions below fill); page-sections.ts places it. */
export const TIMELINE_SECTION_HTML = `
<section id="timeline">
  <h2>Timeline</h2>
  <div class="controls">
    <label>Trace <select id="timeline-select"></select></label>
    <label>Group by <select id="timeline-group"></select></label>
    <label>Search <input type="search" id="timeline-search" class="timeline-search" placeholder="slice or track name" /></label>
    <span id="timeline-filter" class="filter-chip" hidden><span id="timeline-filter-text"></span><button type="button" id="timeline-filter-clear" title="show every slice">✕ clear</button></span>
    <button type="button" id="timeline-perfetto" title="Open this trace in ui.perfetto.dev (the page hands it over: nothing is uploaded elsewhere)">Open in Perfetto</button>
    <span class="hint" id="perfetto-status"></span>
  </div>
  <div id="timeline-legend" class="timeline-legend"></div>
  <p class="hint" id="timeline-note"></p>
  <div id="timeline-chart" class="timeline"></div>
</section>
`;

/** What the page holds of its timeline (page.ts's handle). */
export interface TimelineHolder {
  timeline: TimelineHandle | null;
  trackCount: number;
}

/** The section drawn: how the source view filters the timeline by a kernel line. */
export interface TimelineSection {
  /** Shows only the slices of kernel line `line` (`file:line`), or every slice again (null). */
  filterLine(line: string | null): void;
  /** `listener` hears the kernel line filter cleared from the section (its chip's button). */
  onLineCleared(listener: () => void): void;
}

/** Draws `timelines` in the timeline section; their windows and files asked of `source`. */
export function showTimelines(
  element: <T extends HTMLElement = HTMLElement>(id: string) => T,
  timelines: readonly WebTimeline[],
  source: TimelineSource,
  holder: TimelineHolder,
): TimelineSection {
  const chart = element("timeline-chart");
  const select = element<HTMLSelectElement>("timeline-select");
  const groupSelect = element<HTMLSelectElement>("timeline-group");
  const search = element<HTMLInputElement>("timeline-search");
  const chip = element("timeline-filter");
  const perfetto = element<HTMLButtonElement>("timeline-perfetto");
  const perfettoStatus = element("perfetto-status");
  const note = element("timeline-note");
  let filter: WebTimelineFilter | null = null;
  let lineCleared: () => void = () => {};
  groupSelect.replaceChildren(
    ...GROUP_BY_CHOICES.map((choice) => {
      const option = document.createElement("option");
      option.value = choice.value;
      option.textContent = choice.label;
      return option;
    }),
  );
  const applyFilter = (next: WebTimelineFilter | null) => {
    filter = normalFilter(next);
    chip.hidden = filter === null;
    element("timeline-filter-text").textContent = filter === null ? "" : filterLabel(filter);
    holder.timeline?.setFilter(filter);
  };

  const show = (index: number) => {
    const timeline = timelines[index];
    if (timeline === undefined) return;
    holder.timeline?.dispose();
    holder.trackCount = timeline.tracks.length;
    element("timeline-legend").replaceChildren(...timelineLegend(timeline));
    holder.timeline = renderTimeline(
      chart,
      timeline,
      index,
      source,
      (window) => {
        const kept =
          window.filtered === undefined
            ? filter === null
              ? ""
              : "This page's timeline source does not filter: every slice is shown. "
            : `Filter ${filterLabel(window.filtered)}: ${String(window.filtered.slices)} slices on ${window.filtered.tracks.length} tracks over the run. `;
        note.textContent =
          kept +
          `${timeline.tracks.length} tracks, ${String(timeline.totalSlices)} slices over ${formatNs(timeline.endNs)}; ` +
          `this window ${formatNs(window.fromNs)} … ${formatNs(window.toNs)} holds ${String(window.sliceCount)}${window.filtered === undefined ? "" : " kept"}: ` +
          (window.slices === null
            ? `bars show each track's busy fraction per pixel column (more than ${String(window.maxSlices)} slices: zoom in to see them one by one).`
            : "slices drawn one by one over the busy fractions.") +
          " Wheel zooms time, drag pans, double-click shows the whole run; shift+wheel or the wheel over the names scrolls tracks; click a group's name to collapse it.";
      },
      groupSelect.value as GroupBy,
    );
    if (filter !== null) holder.timeline.setFilter(filter);
  };

  if (timelines.length === 0) {
    for (const control of [select, groupSelect, search, perfetto]) control.disabled = true;
    chart.dataset.trackCount = "0";
    chart.replaceChildren(
      empty("No trace given: kb run BENCH --trace run.trace.json, then pass that file too."),
    );
  } else {
    fillSelect(
      select,
      timelines.map((timeline) => timeline.label),
      0,
    );
    select.addEventListener("change", () => show(Number(select.value)));
    groupSelect.addEventListener("change", () => holder.timeline?.setGroupBy(groupSelect.value as GroupBy));
    let typing: ReturnType<typeof setTimeout> | null = null;
    search.addEventListener("input", () => {
      if (typing !== null) clearTimeout(typing);
      typing = setTimeout(() => applyFilter({ ...filter, search: search.value }), 250);
    });
    element("timeline-filter-clear").addEventListener("click", () => {
      const hadLine = filter?.site !== undefined;
      search.value = "";
      applyFilter(null);
      if (hadLine) lineCleared();
    });
    const load = source.trace;
    perfetto.hidden = load === undefined;
    perfetto.addEventListener("click", () => {
      const index = Number(select.value);
      const timeline = timelines[index];
      if (load === undefined || timeline === undefined) return;
      perfettoStatus.textContent = `Handing ${timeline.label} to ui.perfetto.dev…`;
      openInPerfetto(() => load.call(source, index), timeline.label).then(
        (bytes) => {
          perfettoStatus.textContent = `Handed ${timeline.label} (${bytes} bytes) to ui.perfetto.dev.`;
        },
        (error: unknown) => {
          perfettoStatus.textContent = `Open in Perfetto: ${error instanceof Error ? error.message : String(error)}`;
        },
      );
    });
    show(0);
  }
  return {
    filterLine(line) {
      const { site: _site, ...rest } = filter ?? {};
      applyFilter(line === null ? rest : { ...rest, site: line });
    },
    onLineCleared(listener) {
      lineCleared = listener;
    },
  };
}
