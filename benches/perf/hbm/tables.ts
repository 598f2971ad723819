// What `pnpm bench:hbm` prints: a line per configuration, the progress line, the fidelity table
// with its summary, and the whole-machine table.
import { printTable } from "../report.js";
import type { BenchConfig, ImplChoice } from "./configs.js";
import type { BenchRecord } from "./record.js";
import { isIdle } from "./reference.js";

export const fixed = (value: number | null | undefined, digits: number): string =>
  value === null || value === undefined ? "-" : value.toFixed(digits);
const signed = (value: number | null): string =>
  value === null ? "-" : `${value >= 0 ? "+" : ""}${(100 * value).toFixed(1)}%`;

/** One line of progress on a terminal's stderr (nothing when stderr is a file or a pipe). */
export function progress(line: string): void {
  if (process.stderr.isTTY) process.stderr.write(`\r\x1b[K${line}`);
}

/** The line naming a configuration's memory model before its runs (`peak` in GB/s). */
export function printConfig(config: BenchConfig, choice: ImplChoice, peak: number): void {
  const hbm = choice.topology.cube.hbm;
  process.stdout.write(
    `${config.name}: ${choice.impl}, ${hbm.mapping}, ${hbm.channels} x ${hbm.pseudo_channels} x ${hbm.pc_bw_gbs} GB/s = ${peak.toFixed(1)} GB/s, tick ${config.meta.tckNs} ns${choice.note === null ? "" : ` (${choice.note})`}\n`,
  );
}

/** PASS / MISS against the targets, in parentheses for informative configurations; - without a reference. */
export function mark(row: BenchRecord): string {
  if (row.deviation.pass === null) return "-";
  const word = row.deviation.pass ? "PASS" : "MISS";
  return row.status === "target" ? word : `(${word.toLowerCase()})`;
}

/** The fidelity table: a row per run, kernbench's figures next to the reference's. */
export function printRows(rows: readonly BenchRecord[]): void {
  printTable(
    [
      "config",
      "pattern",
      "mix",
      "GB/s",
      "ref",
      "dev",
      "%peak",
      "lat ns",
      "ref",
      "dev",
      "p99",
      "ref p99",
      "hit",
      "ref hit",
      "mark",
      "klines/s",
      "cpu",
    ],
    rows.map((row) => {
      const idle = isIdle(row.pattern, row.outstanding);
      return [
        row.config,
        row.pattern,
        row.mix,
        fixed(row.steady_gbs, idle ? 2 : 1),
        fixed(row.reference?.steady_gbs, idle ? 2 : 1),
        idle ? "" : signed(row.deviation.steady_gbs),
        fixed(row.pct_peak, 1),
        fixed(row.read_lat_mean_ns, 1),
        fixed(row.reference?.read_lat_mean_ns, 1),
        signed(row.deviation.read_lat_mean_ns),
        fixed(row.read_lat_p99_ns, 0),
        fixed(row.reference?.read_lat_p99_ns, 0),
        fixed(row.row_hit_rate, 2),
        fixed(row.reference?.row_hit_rate, 2),
        mark(row),
        fixed(row.lines_per_s / 1000, 0),
        fixed(row.cpu_s > 0 ? row.requests / row.cpu_s / 1000 : null, 0),
      ];
    }),
    3,
  );
}

/** Per configuration: the runs within the targets and the speeds; then the legend. */
export function printSummary(rows: readonly BenchRecord[]): void {
  const lines: string[] = [""];
  const byConfig = new Map<string, BenchRecord[]>();
  for (const row of rows) byConfig.set(row.config, [...(byConfig.get(row.config) ?? []), row]);
  for (const [name, group] of byConfig) {
    const compared = group.filter((row) => row.deviation.pass !== null);
    const speeds = group.map((row) => row.lines_per_s / 1000);
    const cpuSpeeds = group.map((row) => (row.cpu_s > 0 ? row.requests / row.cpu_s / 1000 : 0));
    const status = group[0]?.status ?? "";
    lines.push(
      `${name} (${status}, ${group[0]?.impl}): ${compared.filter((row) => row.deviation.pass).length}/${compared.length} within the targets; ${Math.min(...speeds).toFixed(0)}-${Math.max(...speeds).toFixed(0)} k lines/s (per CPU second ${Math.min(...cpuSpeeds).toFixed(0)}-${Math.max(...cpuSpeeds).toFixed(0)} k)`,
    );
  }
  lines.push(
    "dev = (kernbench - reference) / reference; targets: steady GB/s within 10%, mean read latency within 15% (idle patterns: latency only); (pass)/(miss): informative configurations.",
  );
  process.stdout.write(`${lines.join("\n")}\n`);
}

/** The whole-machine table (latency at the PE_DMA and at the memory) and each run's busiest parts. */
export function printWholeMachine(rows: readonly BenchRecord[]): void {
  process.stdout.write(
    `\nWhole machine (PE_DMA -> fabric -> HBM), ${rows[0]?.outstanding} reads outstanding at most; latency at the PE_DMA vs at the HBM controller:\n\n`,
  );
  printTable(
    [
      "machine",
      "impl",
      "pattern",
      "mix",
      "GB/s",
      "%peak",
      "lat @PE",
      "lat @HBM",
      "fabric share",
      "p99 @PE",
      "p99 @HBM",
      "klines/s",
      "cpu",
    ],
    rows.map((row) => [
      row.config,
      row.impl,
      row.pattern,
      row.mix,
      fixed(row.steady_gbs, 1),
      fixed(row.pct_peak, 1),
      fixed(row.read_lat_mean_ns, 1),
      fixed(row.whole_machine?.memory_lat_mean_ns, 1),
      row.whole_machine?.fabric_share === null || row.whole_machine === undefined
        ? "-"
        : `${(100 * (row.whole_machine.fabric_share as number)).toFixed(1)}%`,
      fixed(row.read_lat_p99_ns, 0),
      fixed(row.whole_machine?.memory_lat_p99_ns, 0),
      fixed(row.lines_per_s / 1000, 0),
      fixed(row.cpu_s > 0 ? row.requests / row.cpu_s / 1000 : null, 0),
    ]),
    4,
  );
  const share = (entry: { id: string; busy: number } | null | undefined) =>
    entry === null || entry === undefined ? "-" : `${entry.id} ${(100 * entry.busy).toFixed(0)}% busy`;
  for (const row of rows) {
    process.stdout.write(
      `${row.config} ${row.mix}: busiest fabric component ${share(row.whole_machine?.busiest_component)}; busiest link ${share(row.whole_machine?.busiest_link)}\n`,
    );
  }
}
