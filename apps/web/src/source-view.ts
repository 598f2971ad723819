/// <reference lib="dom" />

import { formatByteCount } from "@kb/errors";
import type { WebResults } from "./api.js";
import { formatNs, formatPercent } from "./format.js";
import { type LaunchSource, launchSources, type SourceLine } from "./source-model.js";
import { empty } from "./tables.js";

// The source view (Nsight-style): a launch's kernel source with a bar per line, its share of the
// launch's program time (docs/reports.md, "By line"); clicking a line selects it (the page then
// shows only that line's slices in the timeline).

/** Bar colour of a line's share. */
const BAR = "rgba(214, 96, 77, 0.35)";

/** What a drawn source view holds (for tests: `window.kbWeb.source`). */
export interface SourceViewHandle {
  /** The launches drawn, their files and lines. */
  readonly launches: readonly LaunchSource[];
  /** The selected line (`file:line`), or null. */
  selected: string | null;
  /** Selects line `file:line` (outlined), or none (null), without telling `onSelect`. */
  select(line: string | null): void;
}

/**
 * Draws the source view of the first results file with per-line figures into `container`, a
 * launch chooser into `select`; `onSelect` hears a clicked line (`file:line`, null when cleared).
 */
export function renderSourceView(
  container: HTMLElement,
  select: HTMLSelectElement,
  results: readonly WebResults[],
  sources: Readonly<Record<string, string>>,
  onSelect: (line: string | null) => void = () => {},
): SourceViewHandle {
  const entry = results.find((each) => each.results.launches.some((launch) => launch.sites !== undefined));
  const launches = entry === undefined ? [] : launchSources(entry.results, sources);
  const handle: SourceViewHandle = {
    launches,
    selected: null,
    select(line) {
      handle.selected = line;
      for (const each of Array.from(container.querySelectorAll<HTMLElement>(".source-line.sited"))) {
        each.style.outline = each.dataset.site === line ? "2px solid #d6604d" : "";
      }
    },
  };
  container.dataset.lineCount = "0";
  if (launches.length === 0) {
    select.disabled = true;
    container.replaceChildren(
      empty(
        "No per-line figures: results of kb run --json carry launches[].sites (a kb of this version writes them).",
      ),
    );
    return handle;
  }
  select.replaceChildren(
    ...launches.map((launch, index) => {
      const option = document.createElement("option");
      option.value = String(index);
      option.textContent = launch.launch;
      return option;
    }),
  );
  select.disabled = launches.length < 2;
  const show = (index: number) => {
    const launch = launches[index] as LaunchSource;
    handle.selected = null;
    const rows: HTMLElement[] = [];
    for (const file of launch.files) {
      const heading = document.createElement("h3");
      heading.className = "source-file";
      heading.textContent = file.hasText ? file.file : `${file.file} (source not found: its lines only)`;
      rows.push(heading);
      const listing = document.createElement("div");
      listing.className = "source-listing";
      listing.style.cssText = "font: 12px/1.5 ui-monospace, monospace; border: 1px solid #ddd;";
      for (const line of file.lines) listing.append(lineRow(line, launch.maxShare));
      rows.push(listing);
    }
    container.replaceChildren(...rows);
    container.dataset.lineCount = String(container.querySelectorAll(".source-line.sited").length);
  };
  container.addEventListener("click", (event) => {
    const row = (event.target as HTMLElement).closest<HTMLElement>(".source-line.sited");
    if (row === null) return;
    const key = row.dataset.site ?? null;
    const next = handle.selected === key ? null : key;
    handle.select(next);
    onSelect(next);
  });
  select.addEventListener("change", () => show(Number(select.value)));
  show(0);
  return handle;
}

/** One line: its number, a bar of its share behind the text, and its figures at the right. */
function lineRow(line: SourceLine, maxShare: number): HTMLElement {
  const row = document.createElement("div");
  row.className = line.site === null ? "source-line" : "source-line sited";
  row.style.cssText =
    "display: grid; grid-template-columns: 4em 1fr 22em; gap: 0.5em; position: relative; white-space: pre;";
  const number = document.createElement("span");
  number.textContent = String(line.number);
  number.style.cssText = "color: #888; text-align: right;";
  const code = document.createElement("code");
  code.textContent = line.text;
  code.style.cssText = "position: relative; overflow: hidden;";
  const figures = document.createElement("span");
  figures.style.cssText = "color: #444; overflow: hidden; text-overflow: ellipsis;";
  const site = line.site;
  if (site !== null) {
    row.dataset.site = line.key;
    row.dataset.share = String(site.share);
    row.style.cursor = "pointer";
    const width = maxShare > 0 ? (site.share / maxShare) * 100 : 0;
    row.style.background = `linear-gradient(to right, ${BAR} ${width}%, transparent ${width}%)`;
    const busy = Object.entries(site.busyNs)
      .map(([kind, ns]) => `${kind} ${formatNs(ns)}`)
      .join(", ");
    figures.textContent = `${formatPercent(site.share)}  ${site.calls.map((call) => `tl.${call}`).join(", ")} x${site.count}`;
    row.title = [
      `${line.key}: ${formatPercent(site.share)} of the launch's program time`,
      `wait ${formatNs(site.waitNs)} over ${site.count} call(s): ${site.calls.map((call) => `tl.${call}`).join(", ")}`,
      busy === "" ? "no engine time" : `engine time ${busy}`,
      site.bytes > 0 ? `moved ${formatByteCount(site.bytes)}` : "",
    ]
      .filter((text) => text !== "")
      .join("\n");
  }
  row.append(number, code, figures);
  return row;
}
