// `pnpm bench:hbm`: the memory-fidelity table (see README.md beside this file).
import { execFileSync } from "node:child_process";
import { resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { type KbPlugin, MemoryHarness } from "@kb/components";
import { expandTopology, resolveTopology, type Topology } from "@kb/topology";
import { loadTopologyFile } from "@kb/topology/node";
import { printTable, topologyFile, writeJson } from "../report.js";
import { type BenchConfig, chooseImpl, configNames, loadConfig } from "./configs.js";
import { type RunFigures, runClosedLoop } from "./driver.js";
import {
  type Comparison,
  compare,
  type FidelityRecord,
  isIdle,
  loadReference,
  type ReferenceTable,
  referenceKey,
} from "./reference.js";
import { fidelityDir, listPatterns, patternTrace, readTrace, type Trace } from "./trace.js";
import { runWholeMachine, type WholeMachineFigures } from "./whole-machine.js";

export const SCRIPT = "bench:hbm";

export const USAGE = `Usage: pnpm ${SCRIPT} [--config NAME...] [--pattern P...] [--mix M...] [--trace FILE...]
                      [--impl NAME] [--param KEY=VALUE...] [--plugin P...] [--tck NS]
                      [--whole-machine] [--json FILE] [--fidelity DIR]

Drives the memory-fidelity traces through kernbench's HBM model with the closed loop of
../shared/fidelity/README.md (at the memory, through MemoryHarness) and prints, per
(config, pattern, mix), steady GB/s, % of peak and mean read latency next to the reference's,
the deviations, PASS / MISS against the targets (bandwidth within 10%, mean latency within 15%;
idle patterns: latency only; informative configurations in parentheses) and lines simulated per
wall-clock second.

  --config NAME     a configuration (configs/NAME.yaml: ${configNames().join(", ")}) or a topology
                    file whose cube.hbm is benched; repeat or comma-separate (default: all)
  --pattern P       a pattern of patterns.mjs (default: all of them)
  --mix M           read, rw21 (default: both)
  --trace FILE      a trace in the kb-fidelity-trace v1 format (then only the --pattern given run)
  --impl NAME       the memory model (default: the configuration's, hbm_ctrl_v1 while that is
                    not registered); the configuration's params go only to its own impl
  --param K=V       a param for the memory model (value parsed as JSON when it parses)
  --plugin P        load a plug-in (package name or path) so --impl can name its impls
  --tck NS          the closed loop's tick (default: the reference's, else the preset's CK)
  --whole-machine   also run the tile pattern through a whole machine on topologies/ref-cube.yaml
                    (PE DMAs -> fabric -> HBM; with --config, ref-cube with that cube.hbm)
  --json FILE       write every run as an object with reference.json's fields
  --fidelity DIR    the folder of patterns.mjs and reference.json (default: ../shared/fidelity)
  --help            show this help

Exit code 0 unless a run fails (fidelity is a goal, not a gate).`;

/** One run's record: reference.json's fields plus what kernbench adds. */
export interface BenchRecord extends FidelityRecord {
  impl: string;
  status: string;
  /** Requests per wall-clock second of the closed loop (trace loading and machine building excluded). */
  lines_per_s: number;
  wall_s: number;
  /** The process's CPU seconds over the same span (the speed on a busy machine). */
  cpu_s: number;
  reference: {
    steady_gbs: number;
    read_lat_mean_ns: number | null;
    read_lat_p99_ns: number | null;
    row_hit_rate: number | null;
  } | null;
  deviation: { steady_gbs: number | null; read_lat_mean_ns: number | null; pass: boolean | null };
  whole_machine?: {
    memory_lat_mean_ns: number | null;
    memory_lat_p50_ns: number | null;
    memory_lat_p99_ns: number | null;
    fabric_share: number | null;
    requesters: readonly string[];
    busiest_component: { id: string; busy: number } | null;
    busiest_link: { id: string; busy: number } | null;
  };
}

interface Options {
  configs: string[];
  patterns: string[] | undefined;
  mixes: string[];
  traces: string[];
  impl: string | undefined;
  params: Record<string, unknown>;
  plugins: string[];
  tck: number | undefined;
  wholeMachine: boolean;
  json: string | undefined;
  fidelity: string | undefined;
}

class UsageError extends Error {}

const list = (values: unknown): string[] =>
  ((values as string[] | undefined) ?? [])
    .flatMap((value) => value.split(","))
    .filter((value) => value !== "");

function parseOptions(argv: readonly string[]): Options | null {
  let values: Record<string, unknown>;
  try {
    values = parseArgs({
      args: [...argv],
      options: {
        config: { type: "string", multiple: true },
        pattern: { type: "string", multiple: true },
        mix: { type: "string", multiple: true },
        trace: { type: "string", multiple: true },
        impl: { type: "string" },
        param: { type: "string", multiple: true },
        plugin: { type: "string", multiple: true },
        tck: { type: "string" },
        "whole-machine": { type: "boolean", default: false },
        json: { type: "string" },
        fidelity: { type: "string" },
        help: { type: "boolean", default: false },
      },
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  if (values.help === true) return null;
  const params: Record<string, unknown> = {};
  for (const pair of list(values.param)) {
    const eq = pair.indexOf("=");
    if (eq <= 0) throw new UsageError(`--param takes KEY=VALUE, got "${pair}"`);
    const raw = pair.slice(eq + 1);
    try {
      params[pair.slice(0, eq)] = JSON.parse(raw);
    } catch {
      params[pair.slice(0, eq)] = raw;
    }
  }
  const mixes = list(values.mix);
  for (const mix of mixes)
    if (mix !== "read" && mix !== "rw21") throw new UsageError(`--mix is read or rw21, got "${mix}"`);
  const tck = values.tck === undefined ? undefined : Number(values.tck);
  if (tck !== undefined && !(tck > 0))
    throw new UsageError(`--tck takes a positive number of ns, got "${String(values.tck)}"`);
  const patterns = list(values.pattern);
  return {
    configs: list(values.config),
    patterns: patterns.length > 0 ? patterns : undefined,
    mixes: mixes.length > 0 ? mixes : ["read", "rw21"],
    traces: list(values.trace),
    impl: values.impl as string | undefined,
    params,
    plugins: list(values.plugin),
    tck,
    wholeMachine: values["whole-machine"] === true,
    json: values.json as string | undefined,
    fidelity: values.fidelity as string | undefined,
  };
}

/** A trace to run: a pattern of patterns.mjs (generated lazily) or a file. */
interface TraceSource {
  readonly label: string;
  readonly load: () => Trace;
}

const fixed = (value: number | null | undefined, digits: number): string =>
  value === null || value === undefined ? "-" : value.toFixed(digits);
const signed = (value: number | null): string =>
  value === null ? "-" : `${value >= 0 ? "+" : ""}${(100 * value).toFixed(1)}%`;

/** One line of progress on a terminal's stderr (nothing when stderr is a file or a pipe). */
function progress(line: string): void {
  if (process.stderr.isTTY) process.stderr.write(`\r\x1b[K${line}`);
}

/** Starts a wall-clock and CPU stopwatch; calling the result reads both, in seconds. */
function startClock(): () => { wallS: number; cpuS: number } {
  const wall = performance.now();
  const cpu = process.cpuUsage();
  return () => {
    const used = process.cpuUsage(cpu);
    return { wallS: (performance.now() - wall) / 1000, cpuS: (used.user + used.system) / 1e6 };
  };
}

function gitCommit(): string | null {
  try {
    return execFileSync("git", ["rev-parse", "--short=12", "HEAD"], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    }).trim();
  } catch {
    return null;
  }
}

function record(
  config: BenchConfig,
  trace: Trace,
  impl: string,
  figures: RunFigures | WholeMachineFigures,
  wallS: number,
  cpuS: number,
  note: string | null,
  reference: FidelityRecord | undefined,
  commit: string | null,
): BenchRecord {
  const base: FidelityRecord = {
    simulator: "kernbench",
    simulator_commit: commit,
    config: config.name,
    pattern: trace.pattern,
    mix: trace.mix,
    requests: figures.requests,
    reads: figures.reads,
    writes: figures.writes,
    outstanding: figures.outstanding,
    tck_ns: figures.tck_ns,
    peak_gbs: figures.peak_gbs,
    steady_gbs: figures.steady_gbs,
    whole_gbs: figures.whole_gbs,
    pct_peak: figures.pct_peak,
    read_lat_mean_ns: figures.read_lat_mean_ns,
    read_lat_p50_ns: figures.read_lat_p50_ns,
    read_lat_p99_ns: figures.read_lat_p99_ns,
    row_hit_rate: figures.row_hit_rate,
    sim_ns: figures.sim_ns,
    notes: [
      `impl=${impl}`,
      ...(note === null ? [] : [note]),
      `trace=${trace.source}`,
      ...("t10_ns" in figures
        ? [
            `t10=${figures.t10_ns.toFixed(1)}ns t90=${figures.t90_ns.toFixed(1)}ns`,
            `refusals=${figures.refusals}`,
            `ticks visited=${figures.ticks_visited}`,
          ]
        : []),
      "latency from acceptance at the memory to the last data leaving it; writes complete at acceptance (posted)",
    ].join("; "),
  };
  for (const key of ROUNDED) {
    const value = base[key];
    if (typeof value === "number") (base as unknown as Record<string, number>)[key] = round(value);
  }
  const comparison: Comparison = compare(base, reference);
  return {
    ...base,
    impl,
    status: config.meta.status,
    lines_per_s: wallS > 0 ? Math.round(figures.requests / wallS) : 0,
    wall_s: round(wallS),
    cpu_s: round(cpuS),
    reference:
      reference === undefined
        ? null
        : {
            steady_gbs: reference.steady_gbs,
            read_lat_mean_ns: reference.read_lat_mean_ns,
            read_lat_p99_ns: reference.read_lat_p99_ns,
            row_hit_rate: reference.row_hit_rate,
          },
    deviation: {
      steady_gbs: comparison.bandwidth,
      read_lat_mean_ns: comparison.latency,
      pass: comparison.pass,
    },
  };
}

/** Figures written with 6 significant digits (as reference.json). */
const ROUNDED = [
  "steady_gbs",
  "whole_gbs",
  "pct_peak",
  "read_lat_mean_ns",
  "read_lat_p50_ns",
  "read_lat_p99_ns",
  "row_hit_rate",
  "sim_ns",
] as const;
const round = (value: number): number =>
  Number.isFinite(value) && value !== 0 ? Number(value.toPrecision(6)) : value;

function mark(row: BenchRecord): string {
  if (row.deviation.pass === null) return "-";
  const word = row.deviation.pass ? "PASS" : "MISS";
  return row.status === "target" ? word : `(${word.toLowerCase()})`;
}

function printRows(rows: readonly BenchRecord[]): void {
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

/** The directory the user ran the command in (pnpm runs scripts from the workspace root). */
const userDir = (): string => process.env.INIT_CWD ?? process.cwd();
const userPath = (file: string): string => resolve(userDir(), file);

async function loadPluginList(entries: readonly string[]): Promise<KbPlugin[]> {
  if (entries.length === 0) return [];
  const { loadPlugins } = await import("@kb/components/node");
  return loadPlugins(entries, { from: [userDir(), process.cwd()], relativeTo: userDir() });
}

/** Runs the bench with command-line `argv` (without node and the script); returns the exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  let options: Options | null;
  try {
    options = parseOptions(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`${SCRIPT}: ${error.message}\n\nRun with --help for usage.\n`);
    return 2;
  }
  if (options === null) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const started = performance.now();
  const plugins = await loadPluginList(options.plugins);
  let configs: BenchConfig[];
  try {
    configs = (options.configs.length > 0 ? options.configs : configNames()).map((name) =>
      loadConfig(name, options.tck, userDir()),
    );
  } catch (error) {
    process.stderr.write(`${SCRIPT}: ${(error as Error).message}\n`);
    return 2;
  }
  const dir = fidelityDir(options.fidelity);
  const reference: ReferenceTable = loadReference(dir);
  const sources: TraceSource[] = [];
  for (const file of options.traces) sources.push({ label: file, load: () => readTrace(userPath(file)) });
  const wantPatterns = options.patterns ?? (options.traces.length > 0 ? [] : undefined);
  if (wantPatterns === undefined || wantPatterns.length > 0) {
    if (dir === undefined) {
      process.stderr.write(
        `${SCRIPT}: cannot find the fidelity folder (patterns.mjs); pass --fidelity DIR or --trace FILE.\n`,
      );
      return 2;
    }
    const available = listPatterns(dir);
    const patterns = wantPatterns ?? available;
    for (const pattern of patterns) {
      if (!available.includes(pattern)) {
        process.stderr.write(
          `${SCRIPT}: unknown pattern "${pattern}" (patterns.mjs has ${available.join(", ")}).\n`,
        );
        return 2;
      }
      for (const mix of options.mixes) {
        sources.push({ label: `${pattern} ${mix}`, load: () => readTrace(patternTrace(dir, pattern, mix)) });
      }
    }
  }
  const traces = new Map<TraceSource, Trace>();
  const traceOf = (source: TraceSource): Trace => {
    let trace = traces.get(source);
    if (trace === undefined) {
      trace = source.load();
      traces.set(source, trace);
    }
    return trace;
  };

  const commit = gitCommit();
  const rows: BenchRecord[] = [];
  const failures: string[] = [];
  for (const config of configs) {
    let choice: ReturnType<typeof chooseImpl>;
    try {
      choice = chooseImpl(config.topology, { impl: options.impl, params: options.params, plugins });
    } catch (error) {
      failures.push(`${config.name}: ${(error as Error).message}`);
      continue;
    }
    const graph = expandTopology(choice.topology);
    const hbm = choice.topology.cube.hbm;
    const peak = hbm.channels * hbm.pseudo_channels * hbm.pc_bw_gbs;
    process.stdout.write(
      `${config.name}: ${choice.impl}, ${hbm.mapping}, ${hbm.channels} x ${hbm.pseudo_channels} x ${hbm.pc_bw_gbs} GB/s = ${peak.toFixed(1)} GB/s, tick ${config.meta.tckNs} ns${choice.note === null ? "" : ` (${choice.note})`}\n`,
    );
    for (const source of sources) {
      let trace: Trace;
      try {
        trace = traceOf(source);
      } catch (error) {
        failures.push(`${source.label}: ${(error as Error).message}`);
        continue;
      }
      try {
        const harness = new MemoryHarness(graph, { plugins });
        const clock = startClock();
        const figures = runClosedLoop(trace, harness, { tckNs: config.meta.tckNs, peakGbs: peak });
        const { wallS, cpuS } = clock();
        const ref = reference.get(referenceKey(config.name, trace.pattern, trace.mix));
        const row = record(config, trace, choice.impl, figures, wallS, cpuS, choice.note, ref, commit);
        rows.push(row);
        progress(
          `${config.name} ${trace.pattern} ${trace.mix}: ${fixed(row.steady_gbs, 1)} GB/s, ${fixed(row.read_lat_mean_ns, 1)} ns ${mark(row)} (${wallS.toFixed(1)} s)`,
        );
      } catch (error) {
        failures.push(
          `${config.name} ${trace.pattern} ${trace.mix}: ${(error as Error).stack ?? String(error)}`,
        );
      }
    }
  }
  progress("");
  if (rows.length > 0) {
    process.stdout.write("\n");
    printRows(rows);
    printSummary(rows);
  }

  if (options.wholeMachine) {
    const wholeRows = wholeMachineRuns(options, configs, plugins, dir, commit, failures);
    rows.push(...wholeRows);
  }
  if (options.json !== undefined) writeJson(options.json, rows);
  process.stdout.write(`\nwall time ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
  if (failures.length > 0) {
    for (const failure of failures) process.stderr.write(`${SCRIPT}: ${failure}\n`);
    return 1;
  }
  return 0;
}

function printSummary(rows: readonly BenchRecord[]): void {
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

/** The tile pattern through whole machines on ref-cube (with each --config's cube.hbm when given). */
function wholeMachineRuns(
  options: Options,
  configs: readonly BenchConfig[],
  plugins: readonly KbPlugin[],
  dir: string | undefined,
  commit: string | null,
  failures: string[],
): BenchRecord[] {
  const base: Topology = loadTopologyFile(topologyFile("ref-cube.yaml"));
  const tile: TraceSource[] =
    options.traces.length > 0
      ? options.traces.map((file) => ({ label: file, load: () => readTrace(userPath(file)) }))
      : dir === undefined
        ? []
        : options.mixes.map((mix) => ({
            label: `tile ${mix}`,
            load: () => readTrace(patternTrace(dir, "tile", mix)),
          }));
  if (tile.length === 0) {
    failures.push("--whole-machine: no trace (the fidelity folder is missing; pass --trace FILE)");
    return [];
  }
  const machines: { config: BenchConfig; topology: Topology }[] =
    options.configs.length === 0
      ? [
          {
            config: {
              name: "ref-cube",
              file: topologyFile("ref-cube.yaml"),
              meta: { status: "custom", tckNs: options.tck ?? 0.3125, reference: "-" },
              topology: base,
            },
            topology: base,
          },
        ]
      : configs.map((config) => ({
          config: { ...config, name: `ref-cube+${config.name}` },
          topology: resolveTopology(
            { ...base, cube: { ...base.cube, hbm: config.topology.cube.hbm } },
            "ref-cube",
          ),
        }));
  const rows: BenchRecord[] = [];
  for (const { config, topology } of machines) {
    let choice: ReturnType<typeof chooseImpl>;
    try {
      choice = chooseImpl(topology, { impl: options.impl, params: options.params, plugins });
    } catch (error) {
      failures.push(`${config.name}: ${(error as Error).message}`);
      continue;
    }
    for (const source of tile) {
      try {
        const trace = readTraceOnce(source);
        const graph = expandTopology(choice.topology);
        const clock = startClock();
        const figures = runWholeMachine(trace, graph, { tckNs: config.meta.tckNs, plugins });
        const { wallS, cpuS } = clock();
        const row = record(config, trace, choice.impl, figures, wallS, cpuS, choice.note, undefined, commit);
        row.notes = `whole machine ${topology.name}: ${figures.requesters.length} requesters on PE_DMAs ${figures.requesters[0]} ...; latency at the requester (issue -> data back at the PE_DMA); ${row.notes}`;
        row.whole_machine = {
          memory_lat_mean_ns: figures.memory_lat_mean_ns,
          memory_lat_p50_ns: figures.memory_lat_p50_ns,
          memory_lat_p99_ns: figures.memory_lat_p99_ns,
          fabric_share: figures.fabric_share,
          requesters: figures.requesters,
          busiest_component: figures.busiestComponent,
          busiest_link: figures.busiestLink,
        };
        rows.push(row);
      } catch (error) {
        failures.push(
          `${config.name} whole machine ${source.label}: ${(error as Error).stack ?? String(error)}`,
        );
      }
    }
  }
  if (rows.length > 0) {
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
  return rows;
}

const wholeTraces = new Map<TraceSource, Trace>();
function readTraceOnce(source: TraceSource): Trace {
  let trace = wholeTraces.get(source);
  if (trace === undefined) {
    trace = source.load();
    wholeTraces.set(source, trace);
  }
  return trace;
}
