/// <reference lib="dom" />
import type { WebTimeline } from "./api.js";
import { legendItem, swatch } from "./legend.js";
import { kindLegend } from "./timeline-legend-model.js";

// The timeline's legend as DOM nodes: what each colour is (a component kind, with its track
// count), and what the marks mean (busy bars, slices, group bars, launch markers).

/** The legend of `timeline`: a swatch per kind, then the marks. */
export function timelineLegend(timeline: WebTimeline): HTMLElement[] {
  const kinds = kindLegend(timeline.tracks).map((entry) => {
    const item = legendItem(swatch(entry.colour, "swatch"), `${entry.kind} (${entry.tracks})`);
    item.dataset.kind = entry.kind;
    item.title = `${entry.tracks} track${entry.tracks === 1 ? "" : "s"} of kind ${entry.kind}`;
    return item;
  });
  const busy = swatch("#4e79a7", "swatch");
  busy.style.height = "0.5em";
  busy.style.verticalAlign = "bottom";
  const group = swatch("#7b8a99", "swatch");
  const marker = document.createElement("span");
  marker.className = "legend-marker";
  return [
    ...kinds,
    legendItem(busy, "bar height: busy share of a pixel column (pale behind slices)"),
    legendItem(group, "group row: its tracks' mean busy"),
    legendItem(marker, "launch starts / ends (#n: its number)"),
  ];
}
