/// <reference lib="dom" />
import { expandTopology, parseTopology } from "@kb/topology";
import type { WebData, WebTimeline } from "@kb/web-ui/api";
import { type ResultsPageHandle, renderResultsPage } from "@kb/web-ui/page";
import { localTimelineSource } from "@kb/web-ui/slice-filter";
import type { SliceIndex } from "@kb/web-ui/slice-index";
import { webTopologyOf } from "@kb/web-ui/topology-data";
import { timelineOfTrace } from "@kb/web-ui/trace-timeline";
import "@kb/web-ui/style.css";
import { type RunRecord, webDataOf } from "./run-record.js";

// The results of a run drawn with kb web's views (loaded on the first result: the charts, the
// diagram and the topology parser stay out of the first load). The timeline's windows come from
// the run's trace in memory, in a SliceIndex as kb web's server keeps them. kb web's stylesheet
// styles only what is inside an element of class kb-web: index.html gives it to #results.

/** The timeline source of a run without a trace (its page draws no timeline). */
const NO_TIMELINE = {
  window: async (): Promise<never> => {
    throw new Error("this run has no trace");
  },
};

/** Draws runs into one element, replacing what it drew before. */
export class ResultsView {
  private page: ResultsPageHandle | null = null;
  private readonly topologies = new Map<string, WebData["topology"]>();
  /** The timeline of the run drawn last (the trace read once per run). */
  private traced: { run: RunRecord; timeline: WebTimeline; slices: SliceIndex } | null = null;

  constructor(private readonly root: HTMLElement) {}

  /** The handle of the page drawn (for tests and the console). */
  get handle(): ResultsPageHandle | null {
    return this.page;
  }

  /** Draws `run`, compared with `other` when given (the comparison view of kb web). */
  show(run: RunRecord, other: RunRecord | null): ResultsPageHandle {
    this.page?.dispose();
    if (this.traced?.run !== run) this.traced = null;
    if (this.traced === null && run.trace !== null) {
      const events = (JSON.parse(run.trace) as { traceEvents: unknown[] }).traceEvents;
      const { timeline, slices } = timelineOfTrace(events, `${run.label}.trace.json`, run.label);
      this.traced = { run, timeline, slices };
    }
    const traced = this.traced;
    const data = webDataOf(run, other, this.topologyOf(run.topology), traced?.timeline ?? null);
    this.page = renderResultsPage(
      this.root,
      data,
      // kb web's own source of windows, over the trace in memory: filters by kernel line and
      // search, and the trace text for "Open in Perfetto".
      traced === null || run.trace === null ? NO_TIMELINE : localTimelineSource([traced.slices], [run.trace]),
      {
        comparisonHint:
          "Run the same bench again (its previous run is compared with the latest), or pin a run to compare the next ones with it.",
      },
    );
    return this.page;
  }

  private topologyOf(topology: RunRecord["topology"]): WebData["topology"] {
    let drawn = this.topologies.get(topology.text);
    if (drawn === undefined) {
      const parsed = parseTopology(topology.text, topology.name);
      drawn = webTopologyOf(topology.name, parsed.name, expandTopology(parsed));
      this.topologies.clear();
      this.topologies.set(topology.text, drawn);
    }
    return drawn;
  }
}

/** A link that downloads `text` as `file` (a Blob URL; the previous URL of the link is released). */
export function setDownload(link: HTMLAnchorElement, text: string | null, file: string, type: string): void {
  if (link.href.startsWith("blob:")) URL.revokeObjectURL(link.href);
  if (text === null) {
    link.removeAttribute("href");
    link.setAttribute("aria-disabled", "true");
    return;
  }
  link.href = URL.createObjectURL(new Blob([text], { type }));
  link.download = file;
  link.removeAttribute("aria-disabled");
}
