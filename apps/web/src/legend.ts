/// <reference lib="dom" />
import { IDLE_LINK_COLOUR, NO_DATA_COLOUR, UTILISATION_STOPS, utilisationColour } from "./colour.js";
import type { VerdictLine } from "./results-model.js";

// The diagram's legend and the bottleneck lines at the top of the page, as DOM nodes (text through
// textContent: ids and file names never become markup).

/** What the chosen results file reports, for the legend. */
export interface LegendFacts {
  /** A results file colours the diagram. */
  readonly results: boolean;
  /** It has per-pseudo-channel rows (`hbmPorts`). */
  readonly hbmPorts: boolean;
  /** It has per-link rows (`links`). */
  readonly links: boolean;
}

/**
 * The legend of the diagram: the utilisation scale of components (a PE: its busiest component) and
 * HBM channels (the busiest pseudo-channel, or the controller's in older results), and the link
 * strokes (colour and width by the busiest direction, grey when idle).
 */
export function diagramLegend(facts: LegendFacts): HTMLElement[] {
  if (!facts.results) {
    return [legendItem(swatch(NO_DATA_COLOUR), "no results file: not coloured")];
  }
  const bar = document.createElement("span");
  bar.className = "bar";
  bar.style.background = `linear-gradient(to right, ${UTILISATION_STOPS.join(", ")})`;
  const nodes = legendItem(
    document.createTextNode("utilisation 0%"),
    bar,
    "100%: components (a PE: its busiest), HBM channels (" +
      (facts.hbmPorts
        ? "the busiest of their pseudo-channels"
        : "their controller's: these results have no per-pseudo-channel rows") +
      ")",
  );
  const links = facts.links
    ? legendItem(
        ...[0.1, 0.5, 0.9].map((value) =>
          line(utilisationColour(value), 1.5 + 5.5 * value, `${value * 100}%`),
        ),
        line(IDLE_LINK_COLOUR, 1, "idle"),
        "links: the busiest direction's utilisation (colour and width)",
      )
    : legendItem(
        line(IDLE_LINK_COLOUR, 3, ""),
        "links: width by bandwidth (these results have no per-link rows)",
      );
  nodes.dataset.legend = "nodes";
  links.dataset.legend = "links";
  return [nodes, links];
}

/** A legend entry: its marks and words side by side. */
export function legendItem(...parts: (Node | string)[]): HTMLElement {
  const span = document.createElement("span");
  span.className = "legend";
  span.append(...parts);
  return span;
}

/** A block of `colour` (class `bar`: the diagram's wide scale bar; `swatch`: a small square). */
export function swatch(colour: string, className = "bar"): HTMLElement {
  const span = document.createElement("span");
  span.className = className;
  span.style.background = colour;
  return span;
}

function line(colour: string, width: number, label: string): HTMLElement {
  const span = document.createElement("span");
  span.className = "link-sample";
  span.style.borderTop = `${width}px solid ${colour}`;
  span.title = label;
  const text = document.createElement("small");
  text.textContent = label;
  const wrap = document.createElement("span");
  wrap.className = "link-sample-wrap";
  wrap.append(span, text);
  return wrap;
}

/** One line per launch: `file: launch — verdict`, or what is missing in older results. */
export function verdictList(lines: readonly VerdictLine[], files: number): HTMLElement[] {
  return lines.map((entry) => {
    const row = document.createElement("li");
    const name = document.createElement("b");
    name.textContent = files > 1 ? `${entry.file}: ${entry.launch}` : entry.launch;
    row.append(name, `: ${entry.text ?? "no verdict (results written before kb run reported bottlenecks)"}`);
    row.className = entry.text === null ? "verdict none" : "verdict";
    return row;
  });
}
