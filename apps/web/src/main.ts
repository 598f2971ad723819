/// <reference lib="dom" />
import type { WebData, WebTimelineWindow } from "./api.js";
import { byId } from "./dom.js";
import { type ResultsPageHandle, renderResultsPage } from "./page.js";
import { showSweepPoint } from "./sweep-point.js";
import type { TimelineSource } from "./timeline.js";
import { filterQuery } from "./timeline-filter-model.js";

// kb web's page: the data from the server (GET /api/data), drawn by page.ts; the timeline's
// windows from GET /api/timeline, its trace file (for Perfetto) from GET /api/trace.

/** What the page exposes on `window.kbWeb` for tests and for poking at in the console. */
export type KbWebHandle = ResultsPageHandle;

declare global {
  interface Window {
    kbWeb?: KbWebHandle;
  }
}

/** The timeline's windows from kb web's server. */
const httpTimelineSource: TimelineSource = {
  async window(trace, fromNs, toNs, width, filter) {
    const query = new URLSearchParams({
      trace: String(trace),
      from: String(fromNs),
      to: String(toNs),
      width: String(width),
      ...filterQuery(filter ?? null),
    });
    const response = await fetch(`/api/timeline?${query}`);
    if (!response.ok)
      throw new Error(`GET /api/timeline answered ${response.status}: ${await response.text()}`);
    return (await response.json()) as WebTimelineWindow;
  },
  async trace(trace) {
    const response = await fetch(`/api/trace?trace=${trace}`);
    if (!response.ok) throw new Error(`GET /api/trace answered ${response.status}: ${await response.text()}`);
    return response.arrayBuffer();
  },
};

async function main(): Promise<void> {
  const response = await fetch(`/api/data${location.search}`);
  if (!response.ok) throw new Error(`GET /api/data answered ${response.status}: ${await response.text()}`);
  const data = (await response.json()) as WebData;
  if (data.schema !== "kb.web/1") throw new Error(`unexpected data schema ${String(data.schema)}`);
  window.kbWeb = renderResultsPage(byId("results-page"), data, httpTimelineSource);
  byId("topology-name").textContent = `— ${data.topology.name}`;
  byId("warnings").replaceChildren(
    ...data.warnings.map((warning) => {
      const item = document.createElement("li");
      item.textContent = warning;
      return item;
    }),
  );
  showSweepPoint(byId("sweep-point"), data.sweepPoint);
  byId("status").hidden = true;
  document.body.dataset.ready = "true";
}

main().catch((error: unknown) => {
  const status = document.getElementById("status");
  const message = error instanceof Error ? error.message : String(error);
  if (status !== null) {
    status.textContent = `kb web could not draw the page: ${message}`;
    status.classList.add("error");
  }
  document.body.dataset.ready = "error";
  document.body.dataset.error = message;
});
