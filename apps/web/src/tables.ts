/// <reference lib="dom" />
import type { RunResults } from "@kb/runtime";
import type { WebResults } from "./api.js";
import { formatNs, formatNumber, formatPercent, formatRatio, formatSi } from "./format.js";
import { launchesSummary } from "./launch-model.js";
import { type ComparedRow, type Headline, headlines, modelCounterRows } from "./results-model.js";
import { verificationRows } from "./verification-model.js";

// Tables are built with DOM nodes and textContent: file names and ids never become markup.

type Cell = string | { readonly text: string; readonly className?: string };

/** A `<table>` with a header row and body rows; numbers right-aligned by passing `{ className: "num" }`. */
export function table(
  header: readonly string[],
  rows: readonly (readonly Cell[])[],
  caption?: string,
): HTMLTableElement {
  const element = document.createElement("table");
  if (caption !== undefined) element.createCaption().textContent = caption;
  const head = element.createTHead().insertRow();
  for (const title of header) {
    const th = document.createElement("th");
    th.textContent = title;
    head.appendChild(th);
  }
  const body = element.createTBody();
  for (const row of rows) {
    const tr = body.insertRow();
    for (const cell of row) {
      const td = tr.insertCell();
      if (typeof cell === "string") td.textContent = cell;
      else {
        td.textContent = cell.text;
        if (cell.className !== undefined) td.className = cell.className;
      }
    }
  }
  return element;
}

/** A paragraph saying what is missing and how to get it. */
export function empty(text: string): HTMLParagraphElement {
  const element = document.createElement("p");
  element.className = "empty";
  element.textContent = text;
  return element;
}

/** A headline value as text. */
export function formatHeadline(unit: Headline["unit"], value: number | null): string {
  if (value === null) return "-";
  switch (unit) {
    case "ns":
      return formatNs(value);
    case "FLOP/s":
      return formatSi(value, "FLOP/s");
    case "B/s":
      return formatSi(value, "B/s");
    case "fraction":
      return formatPercent(value);
    default:
      return formatNumber(value, 6);
  }
}

const num = (text: string) => ({ text, className: "num" });

/** One column per results file: bench, params, then the headline numbers. */
export function summaryTable(entries: readonly WebResults[]): HTMLTableElement {
  const rows: Cell[][] = [
    ["bench", ...entries.map((entry) => entry.results.bench ?? "(none)")],
    ["topology", ...entries.map((entry) => entry.results.topology)],
    ["params", ...entries.map((entry) => JSON.stringify(entry.results.params))],
    ["launches", ...entries.map((entry) => launchesSummary(entry.results))],
  ];
  const columns = entries.map((entry) => headlines(entry.results));
  (columns[0] ?? []).forEach((row, index) => {
    rows.push([
      row.label,
      ...columns.map((column) => {
        const cell = column[index] as Headline;
        return num(formatHeadline(cell.unit, cell.value));
      }),
    ]);
  });
  return table(["", ...entries.map((entry) => entry.label)], rows);
}

/** The verification of a `--verify` run: one row per output, as `kb run --verify` prints it. */
export function verificationTable(entry: WebResults): HTMLElement {
  const verification = entry.results.verification;
  if (verification === undefined) {
    return empty(`${entry.label}: no verification (run kb run --verify --json to get one).`);
  }
  const passed = verification.outputs.filter((output) => output.pass).length;
  const rows = verificationRows(verification.outputs).map((row): Cell[] => [
    row.name,
    row.dtype,
    row.shape,
    row.nonFinite,
    num(row.maxAbsError),
    num(row.maxRelError),
    num(row.mismatches),
    row.firstMismatch,
    row.tolerance,
    { text: row.pass ? "PASS" : "FAIL", className: row.pass ? "pass" : "fail" },
    row.problem,
  ]);
  return table(
    [
      "output",
      "dtype",
      "shape",
      "non-finite",
      "max abs err",
      "max rel err",
      "mismatches",
      "first mismatch",
      "tolerance",
      "result",
      "problem",
    ],
    rows,
    `${entry.label}: ${verification.pass ? "PASS" : "FAIL"}: ${passed} of ${verification.outputs.length} outputs match`,
  );
}

/** A comparison table: A, B and B / A per row. */
export function comparisonTable(
  rows: readonly ComparedRow[],
  labelA: string,
  labelB: string,
  first: string,
): HTMLTableElement {
  return table(
    [first, `A: ${labelA}`, `B: ${labelB}`, "B / A"],
    rows.map((row) => [
      row.label,
      num(formatHeadline(row.unit, row.a)),
      num(formatHeadline(row.unit, row.b)),
      num(formatRatio(row.ratio)),
    ]),
  );
}

/**
 * The counters the run's timing models published (row hits, ACTs, ... of hbm_ctrl_v2): one row per
 * counter of each component, its total and its busiest and idlest port; the description on hover.
 */
export function modelCountersTable(entry: WebResults): HTMLElement {
  const rows = modelCounterRows(entry.results);
  if (rows.length === 0) {
    return empty(`${entry.label}: no model publishes counters (hbm_ctrl_v2 does: set cube.hbm.impl).`);
  }
  const element = table(
    ["component", "impl", "counter", "total", "unit", "max port", "min port"],
    rows.map((row) => [
      row.component,
      row.impl,
      row.name,
      num(formatNumber(row.total, 6)),
      row.unit,
      row.ports === null ? "-" : num(`${formatNumber(row.ports.max, 6)} ${row.ports.maxAt}`),
      row.ports === null ? "-" : num(`${formatNumber(row.ports.min, 6)} ${row.ports.minAt}`),
    ]),
    `${entry.label}: model counters`,
  );
  rows.forEach((row, index) => {
    const counterCell = element.tBodies[0]?.rows[index]?.cells[2];
    if (counterCell !== undefined) counterCell.title = row.description;
  });
  return element;
}
