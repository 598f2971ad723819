import {
  formatByteCount,
  formatFixed,
  formatNs,
  formatNumber,
  formatPercent,
  formatSi,
  groupDigits,
} from "@kb/errors";
import { type RunResults, statsOfBusiestModel } from "@kb/runtime";
import { formatCounterDetail } from "./counter-detail.js";
import { formatEnergy } from "./format-energy.js";
import { formatGemmPeaks, formatLaunches } from "./format-launches.js";

// Number formats are the page's (apps/web/src/format.ts, bundled in): `kb run` and `kb web` print
// every time and rate the same way.
export { formatNs, formatSi, groupDigits };

/** What `kb run` knows about a run besides its results: wall times and the bench's outputs. */
export interface RunExtras {
  /** Wall time of building the machine and of the bench's run, ms (the human summary only). */
  readonly buildWallMs: number;
  readonly runWallMs: number;
  /** The outputs the bench returned for checking: name, dtype and shape. */
  readonly outputs: readonly RunOutput[];
  /** True when phase 2 ran (its table follows the summary). */
  readonly verified?: boolean;
}

/** An output a bench returned for checking; `dtype` and `shape` are absent when it is not a device tensor. */
export interface RunOutput {
  readonly name: string;
  readonly dtype?: string;
  readonly shape?: readonly number[];
}

/**
 * The human summary of `kb run`: bench, topology and params; simulated time, events and the
 * event rate; each launch over its kernel window (rates, bytes per level, rooflines) and the host
 * copies apart; the whole run's throughput against the peaks and its roofline time; utilisation by component kind;
 * the ten busiest components; the outputs the bench returned. Everything but the wall times
 * depends on the results only.
 */
export function formatRunSummary(results: RunResults, extras: RunExtras): string {
  const lines: string[] = [];
  const simNs = results.simTimeNs;
  const eventsPerS = extras.runWallMs > 0 ? (results.events / extras.runWallMs) * 1000 : 0;

  lines.push(`bench ${results.bench ?? "(none)"} on topology ${results.topology}`);
  lines.push(
    ...table([
      ["params", Object.keys(results.params).length === 0 ? "(none)" : JSON.stringify(results.params)],
      ["simulated time", formatNs(simNs)],
      [
        "events",
        `${groupDigits(results.events)} in ${formatWallMs(extras.runWallMs)} wall (${formatSi(eventsPerS, "events/s")}; machine built in ${formatWallMs(extras.buildWallMs)})`,
      ],
    ]),
  );
  lines.push("");

  // The headline: each launch over its own kernel window, host copies apart.
  lines.push("launches (each over its kernel window, against the peaks of the hardware it used)");
  lines.push(...table(formatLaunches(results, formatByteCount)));
  lines.push("");
  const counters = formatModelCounters(results);
  if (counters.length > 0) lines.push(...counters, "");

  // The whole run, host copies included: what the run achieved against the peaks it used.
  const { work, peak, achieved } = results;
  const mathPerS = simNs > 0 ? (work.mathFlops / simNs) * 1e9 : 0;
  const gemmPerS = simNs > 0 ? (work.gemmFlops / simNs) * 1e9 : 0;
  const gemmPeaks = formatGemmPeaks(peak.gemmFlopsPerSByDtype);
  lines.push("whole run (simulated time, host copies included; against the peaks the run used)");
  lines.push(
    ...table([
      ...(gemmPeaks === "" ? [] : [["GEMM peak", gemmPeaks]]),
      ["GEMM", rate("GEMM", work.gemmFlops, gemmPerS, peak.gemmFlopsPerS, "FLOP/s", " (best dtype)")],
      ...(work.gemmFlops > 0 ? [["GEMM array", arrayUtilisation(achieved.gemmArrayUtilisation)]] : []),
      ["MATH", rate("MATH", work.mathFlops, mathPerS, peak.mathFlopsPerS, "FLOP/s")],
      ["all FLOPs", formatSi(achieved.flopsPerS, "FLOP/s")],
      ["HBM", rate("HBM", work.hbmBytes, achieved.hbmBytesPerS, peak.hbmBytesPerS, "B/s")],
      ...(achieved.hbmPortBalance == null ? [] : [["HBM PCs", portBalance(achieved.hbmPortBalance)]]),
      ...linkRow(results.links),
      [
        "roofline time",
        results.rooflineNs > 0
          ? `${formatNs(results.rooflineNs)} (the whole run took ${formatNumber(simNs / results.rooflineNs, 3)} x that)`
          : "0 ns (no GEMM, MATH or HBM work)",
      ],
    ]),
  );
  lines.push("");
  const energy = formatEnergy(results);
  if (energy.length > 0) lines.push(...energy, "");

  lines.push(...formatKinds(results));
  lines.push("");

  lines.push("outputs");
  if (extras.outputs.length === 0) lines.push("  (the bench returned none)");
  else {
    lines.push(
      ...table(
        extras.outputs.map((output) => [
          output.name,
          output.shape === undefined
            ? "(not a device tensor)"
            : `${output.dtype ?? "?"} [${output.shape.join(", ")}]`,
        ]),
      ),
    );
  }
  if (extras.verified !== true)
    lines.push("verification: not run (add --verify to replay the op log and check the outputs)");
  return `${lines.join("\n")}\n`;
}

/**
 * The counters of the busiest component whose model publishes any (`components[].stats`): a
 * heading naming it, then `name value` pairs wrapped at 100 columns (none when no model publishes).
 */
export function formatModelCounters(results: Pick<RunResults, "components">): string[] {
  const row = statsOfBusiestModel(results.components);
  if (row === null || row.stats === undefined) return [];
  const lines = [
    `model counters of ${row.id} (${row.impl}, ${formatPercent(row.utilisation)} busy: the busiest component whose model publishes counters)`,
  ];
  let line = " ";
  for (const stat of row.stats) {
    const value = Number.isInteger(stat.total) ? groupDigits(stat.total) : formatNumber(stat.total, 4);
    const pair = ` ${stat.name} ${value}${stat.unit === "count" ? "" : ` ${stat.unit}`}`;
    if (line.length > 1 && line.length + pair.length + 1 > 100) {
      lines.push(`${line},`);
      line = " ";
    }
    line += line.length > 1 ? `,${pair}` : pair;
  }
  lines.push(line, ...formatCounterDetail(row));
  return lines;
}

/**
 * Utilisation by kind with its spread: the mean over the kind's components, the busiest and the
 * idlest of them, and the busiest lane (a PE_DMA read lane, an HBM pseudo-channel); then the
 * busiest component of each kind (ten identical PE_DMA rows said nothing).
 */
function formatKinds(results: RunResults): string[] {
  const kinds = results.byKind.filter((kind) => kind.ops > 0);
  const lines = [
    "utilisation by kind (busy: summed over the kind's components; util: their mean; max/min: the busiest and idlest; lane max: the busiest lane)",
  ];
  lines.push(
    ...table([
      ["kind", "count", "busy", "util", "max", "min", "lane max", "ops", "bytes"],
      ...kinds.map((kind) => [
        kind.kind,
        String(kind.count),
        formatNs(kind.busyNs),
        formatPercent(kind.utilisation),
        kind.instances === undefined ? "-" : formatPercent(kind.instances.max),
        kind.instances === undefined ? "-" : formatPercent(kind.instances.min),
        kind.lanes === undefined
          ? "-"
          : `${formatPercent(kind.lanes.max)} ${laneOf(kind.lanes.busiest)}`.trim(),
        groupDigits(kind.ops),
        formatByteCount(kind.bytes),
      ]),
    ]),
  );
  lines.push("");
  // The busiest component of each kind, busiest first (the JSON's `busiest` keeps the top ten).
  const seen = new Set<string>();
  const rows = [...results.components]
    .sort((a, b) => b.utilisation - a.utilisation || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .filter((row) => row.utilisation > 0 && !seen.has(row.kind) && seen.add(row.kind))
    .slice(0, 10);
  lines.push("busiest component of each kind");
  lines.push(
    ...table([
      ["component", "impl", "util", "busy", "lanes", "ops", "bytes"],
      ...rows.map((row) => [
        row.id,
        row.impl,
        formatPercent(row.utilisation),
        formatNs(row.busyNs),
        row.lanes === undefined
          ? "-"
          : row.lanes.length > 4
            ? `${row.lanes.length} lanes, max ${formatPercent(Math.max(...row.lanes.map((lane) => lane.utilisation)))}`
            : row.lanes.map((lane) => `${lane.name} ${formatPercent(lane.utilisation)}`).join(", "),
        groupDigits(row.ops),
        formatByteCount(row.bytes),
      ]),
    ]),
  );
  return lines;
}

/** The links line: how many carried traffic and the busiest (none for results without links). */
function linkRow(links: RunResults["links"]): string[][] {
  if (links === undefined || links.length === 0) return [];
  const busiest = links.reduce((best, link) => (link.utilisation > best.utilisation ? link : best));
  const mean = links.reduce((sum, link) => sum + link.utilisation, 0) / links.length;
  return [
    [
      "links",
      `${links.length} used, ${formatPercent(mean)} busy on average; busiest ${busiest.src} -> ${busiest.dst} at ${formatPercent(busiest.utilisation)} (${formatSi(busiest.bwGbs * 1e9, "B/s")})`,
    ],
  ];
}

/** The lane part of a spread member (`sip0.cube0.pe3.pe_dma read` -> `read`); empty for a component. */
function laneOf(member: string): string {
  const space = member.indexOf(" ");
  return space < 0 ? "" : member.slice(space + 1);
}

/** The MAC arrays' utilisation while computing, by the PE_GEMM impls' own cycles. */
function arrayUtilisation(fraction: number | null | undefined): string {
  if (fraction === null || fraction === undefined)
    return "utilisation unknown (the PE_GEMM impl states no cycles)";
  return `${formatPercent(fraction)} utilised while computing (m n k / (cycles x R x C), the impls' own cycles)`;
}

function rate(what: string, work: number, perS: number, peakPerS: number, unit: string, which = ""): string {
  if (work === 0) return `none (no ${what} work)`;
  if (peakPerS <= 0) return formatSi(perS, unit);
  return `${formatSi(perS, unit)} of ${formatSi(peakPerS, unit)} peak${which} (${formatPercent(perS / peakPerS)})`;
}

/** A wall time: `714 ms`, `12.34 s`. */
export function formatWallMs(ms: number): string {
  return ms < 1000 ? `${formatFixed(ms, 0)} ms` : `${formatFixed(ms / 1000, 2)} s`;
}

/**
 * A bench's own table: its title, then right-aligned columns (numbers as given); then one line per
 * series over simulated time (its points, span, min, mean and max; the points are in the JSON).
 */
export function formatReport(report: NonNullable<RunResults["report"]>): string {
  const cells = [report.columns.map(String), ...report.rows.map((row) => row.map(String))];
  const widths = report.columns.map((_, c) => Math.max(...cells.map((row) => (row[c] ?? "").length)));
  const line = (row: readonly string[]) =>
    `  ${row.map((cell, c) => cell.padStart(widths[c] ?? 0)).join("  ")}`;
  const series = (report.series ?? []).map(({ name, unit, x, y }) => {
    if (y.length === 0) return `  ${name} (${unit}): no points\n`;
    const mean = y.reduce((sum, v) => sum + v, 0) / y.length;
    const [first, last] = [x[0] ?? 0, x.at(-1) ?? 0];
    return `  ${name} (${unit}): ${y.length} points from t = ${formatNs(first)} to ${formatNs(last)}, min ${formatNumber(Math.min(...y), 4)}, mean ${formatNumber(mean, 4)}, max ${formatNumber(Math.max(...y), 4)}\n`;
  });
  const tail =
    series.length > 0
      ? `${series.join("")}  (the series' points: --json report.series; kb web charts them)\n`
      : "";
  return `${report.title}\n${[line(cells[0] as string[]), ...cells.slice(1).map(line)].join("\n")}\n${tail}`;
}

/** Left-aligned columns, indented by two spaces; trailing blanks trimmed. */
export function table(rows: readonly (readonly string[])[]): string[] {
  const widths: number[] = [];
  for (const row of rows) {
    row.forEach((cell, index) => {
      widths[index] = Math.max(widths[index] ?? 0, cell.length);
    });
  }
  return rows.map((row) =>
    `  ${row.map((cell, index) => (index === row.length - 1 ? cell : cell.padEnd(widths[index] ?? 0))).join("  ")}`.trimEnd(),
  );
}

/** `busiest 1.08 x the mean per 10 us window (1.01 x over the run), 32 pseudo-channels of sip0.cube0.hbm`. */
function portBalance(balance: NonNullable<RunResults["achieved"]["hbmPortBalance"]>): string {
  const { maxOverMean, windowMaxOverMean, ports, stack } = balance;
  return `busiest ${formatNumber(windowMaxOverMean, 3)} x the mean per 10 us window (${formatNumber(
    maxOverMean,
    3,
  )} x over the run), ${ports} pseudo-channels of ${stack}`;
}
