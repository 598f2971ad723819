// `pnpm bench:noc`: BookSim 2's mesh reproduced through kernbench's fabric (README.md beside this file).
import { join } from "node:path";
import { parseArgs } from "node:util";
import type { KbPlugin } from "@kb/components";
import { printTable, writeJson } from "../report.js";
import { ConfigError, loadConfig, loadReference, type NocRun, nocFidelityDir } from "./config.js";
import { bySeries, judge, type NocPoint, passes, seriesKey, summarise } from "./judge.js";
import { measurePoint, type PointFigures } from "./measure.js";
import { meshTopology, parseMesh, type RouterChoice } from "./mesh.js";

export const SCRIPT = "bench:noc";

export const USAGE = `Usage: pnpm ${SCRIPT} [--config FILE.json] [--json OUT.json] [--warmup-cycles N]
                      [--measure-cycles N] [--impl NAME] [--param KEY=VALUE...] [--plugin P...]

Drives an R x C mesh of BookSim 2's reference routers (../shared/fidelity/noc/README.md) with
synthetic traffic through startTraffic (@kb/components) and prints, per point, the simulated
accepted rate and latencies next to BookSim 2's, then per (mesh, traffic, packet size) the
zero-load latency, the saturation throughput and the latency under load against the targets
(2%, 10%, 15% up to 0.8 x saturation), with PASS / MISS.

  --config FILE      a config {"runs": [...]} (default: the shared bench-config.json)
  --json FILE        write {"points": [...], "summary": [...]} in reference.json's schema
  --warmup-cycles N  override every run's warm-up window (quicker, noisier)
  --measure-cycles N override every run's measurement window
  --impl NAME        the NOC routers' impl (cube.noc.impl; a plug-in's "pkg:name"; default
                     port_hop_v1 with 16 B flits at 1 ns and BookSim's 2 virtual channels;
                     transit_v1 is the model before it)
  --param K=V        a param of the routers (cube.noc.params; the value parsed as JSON);
                     --param vcs=0 benches the topologies' default router (no VCs)
  --plugin P         load a plug-in (package name or path) for --impl
  --help             show this help

Exit code 0 unless the command line or the config is wrong (2): fidelity is a goal, not a gate.`;

interface Options {
  config: string | undefined;
  json: string | undefined;
  warmup: number | undefined;
  measure: number | undefined;
  router: RouterChoice;
  plugins: string[];
}

class UsageError extends Error {}

function cycles(text: string | undefined, name: string): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 0)
    throw new UsageError(`${name} needs a whole number of cycles, got "${text}".`);
  return value;
}

function parseOptions(argv: readonly string[]): Options | null {
  let values: Record<string, unknown>;
  try {
    values = parseArgs({
      args: [...argv],
      options: {
        config: { type: "string" },
        json: { type: "string" },
        "warmup-cycles": { type: "string" },
        "measure-cycles": { type: "string" },
        impl: { type: "string" },
        param: { type: "string", multiple: true },
        plugin: { type: "string", multiple: true },
        help: { type: "boolean", default: false },
      },
      strict: true,
    }).values;
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  if (values.help === true) return null;
  const params: Record<string, unknown> = {};
  for (const entry of (values.param as string[] | undefined) ?? []) {
    const at = entry.indexOf("=");
    if (at <= 0) throw new UsageError(`--param needs KEY=VALUE, got "${entry}".`);
    const text = entry.slice(at + 1);
    let value: unknown = text;
    try {
      value = JSON.parse(text);
    } catch {
      // a plain string
    }
    params[entry.slice(0, at)] = value;
  }
  const measure = cycles(values["measure-cycles"] as string | undefined, "--measure-cycles");
  if (measure === 0) throw new UsageError("--measure-cycles needs at least 1 cycle.");
  return {
    config: values.config as string | undefined,
    json: values.json as string | undefined,
    warmup: cycles(values["warmup-cycles"] as string | undefined, "--warmup-cycles"),
    measure,
    router: {
      ...(values.impl === undefined ? {} : { impl: values.impl as string }),
      ...(Object.keys(params).length === 0 ? {} : { params }),
    },
    plugins: (values.plugin as string[] | undefined) ?? [],
  };
}

/** A bench point with the engine's work. */
type MeasuredPoint = NocPoint & Pick<PointFigures, "eventsPerPacket" | "packetsPerSecond" | "unfinished">;

/** Runs every rate of `run`, judging each point against the series' zero-load latency. */
export function runSeries(run: NocRun, router: RouterChoice, plugins: readonly KbPlugin[]): MeasuredPoint[] {
  const size = parseMesh(run.mesh);
  if (size === undefined) throw new ConfigError(`mesh "${run.mesh}" is not RxC.`);
  const graph = meshTopology(size, { ...router, routing: run.routing });
  const offered = [...run.offered].sort((a, b) => a - b);
  const figures = offered.map((rate) =>
    measurePoint(
      graph,
      size,
      {
        traffic: run.traffic,
        packetFlits: run.packet_flits,
        offered: rate,
        warmupCycles: run.warmup_cycles,
        measureCycles: run.measure_cycles,
        seed: run.seed,
      },
      plugins,
    ),
  );
  const zeroLoad = (figures[0] as PointFigures).packet_latency;
  return figures.map((figure, index) => {
    const rate = offered[index] as number;
    return {
      mesh: run.mesh,
      routing: run.routing,
      traffic: run.traffic,
      packet_flits: run.packet_flits,
      offered: rate,
      accepted: figure.accepted,
      packet_latency: figure.packet_latency,
      network_latency: figure.network_latency,
      flit_latency: figure.flit_latency,
      saturated: !passes({ offered: rate, ...figure }, zeroLoad),
      eventsPerPacket: figure.eventsPerPacket,
      packetsPerSecond: figure.packetsPerSecond,
      unfinished: figure.unfinished,
    };
  });
}

const fixed = (value: number, digits: number) => value.toFixed(digits);
const percent = (value: number) => `${value >= 0 ? "+" : ""}${(100 * value).toFixed(1)}%`;

function printPoints(points: readonly MeasuredPoint[], reference: ReadonlyMap<string, NocPoint>): void {
  const rows = points.map((point) => {
    const theirs = reference.get(`${seriesKey(point)}|${point.offered}`);
    return [
      point.traffic,
      String(point.packet_flits),
      fixed(point.offered, 3),
      fixed(point.accepted, 4),
      theirs === undefined ? "-" : fixed(theirs.accepted, 4),
      fixed(point.packet_latency, 2),
      theirs === undefined ? "-" : fixed(theirs.packet_latency, 2),
      theirs === undefined
        ? "-"
        : percent((point.packet_latency - theirs.packet_latency) / theirs.packet_latency),
      fixed(point.network_latency, 2),
      point.saturated ? "sat" : "",
      fixed(point.eventsPerPacket, 2),
    ];
  });
  printTable(
    [
      "traffic",
      "P",
      "offered",
      "accepted",
      "booksim",
      "latency",
      "booksim",
      "error",
      "network",
      "",
      "ev/pkt",
    ],
    rows,
    1,
  );
}

/** Prints a verdict per series; returns how many series had a reference and how many missed. */
function printVerdicts(
  points: readonly MeasuredPoint[],
  reference: readonly NocPoint[],
): { judged: number; misses: number } {
  const rows: string[][] = [];
  let judged = 0;
  let misses = 0;
  for (const series of bySeries(points)) {
    const key = seriesKey(series[0] as NocPoint);
    const theirs = reference.filter((point) => seriesKey(point) === key);
    if (theirs.length === 0) {
      const own = summarise(series);
      rows.push([
        own.mesh,
        own.traffic,
        String(own.packet_flits),
        fixed(own.zero_load_latency, 2),
        "-",
        "-",
        fixed(own.saturation_throughput, 3),
        "-",
        "-",
        "-",
        "no reference",
      ]);
      continue;
    }
    judged++;
    const verdict = judge(series, theirs);
    const worst = verdict.latencyErrors.reduce(
      (max, entry) =>
        entry.error === null ? Number.POSITIVE_INFINITY : Math.max(max, Math.abs(entry.error)),
      0,
    );
    const pass = verdict.zeroLoadPass && verdict.saturationPass && verdict.latencyPass;
    if (!pass) misses++;
    const mark = (ok: boolean) => (ok ? "" : "!");
    rows.push([
      verdict.bench.mesh,
      verdict.bench.traffic,
      String(verdict.bench.packet_flits),
      fixed(verdict.bench.zero_load_latency, 2),
      fixed(verdict.reference.zero_load_latency, 2),
      percent(verdict.zeroLoadError) + mark(verdict.zeroLoadPass),
      fixed(verdict.bench.saturation_throughput, 3),
      fixed(verdict.reference.saturation_throughput, 3),
      percent(verdict.saturationError) + mark(verdict.saturationPass),
      (Number.isFinite(worst) ? `${(100 * worst).toFixed(1)}%` : "missing") + mark(verdict.latencyPass),
      pass ? "PASS" : "MISS",
    ]);
  }
  process.stdout.write("\n");
  printTable(
    [
      "mesh",
      "traffic",
      "P",
      "zero-load",
      "booksim",
      "error",
      "saturation",
      "booksim",
      "error",
      "latency<=0.8sat",
      "",
    ],
    rows,
    2,
  );
  return { judged, misses };
}

/** The last line's verdict: never "passes" when no series had a reference to be judged against. */
function verdictOf(judged: number, misses: number, dir: string | undefined): string {
  if (judged === 0) {
    const where =
      dir === undefined
        ? "no shared/fidelity/noc found: put ../shared beside the repository or set KB_NOC_FIDELITY_DIR"
        : `none in ${dir}`;
    return `no series has a BookSim reference (${where}): nothing judged`;
  }
  return misses === 0 ? "every series passes" : `${misses} series miss a target`;
}

/** Runs the bench with command-line `argv` (without node and the script); returns the exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  let options: Options | null;
  let runs: NocRun[];
  const dir = nocFidelityDir();
  try {
    options = parseOptions(argv);
    if (options === null) {
      process.stdout.write(`${USAGE}\n`);
      return 0;
    }
    const file = options.config ?? (dir === undefined ? undefined : join(dir, "bench-config.json"));
    if (file === undefined)
      throw new UsageError("no --config and no ../shared/fidelity/noc/bench-config.json found.");
    runs = loadConfig(file).map((run) => ({
      ...run,
      ...(options?.warmup === undefined ? {} : { warmup_cycles: options.warmup }),
      ...(options?.measure === undefined ? {} : { measure_cycles: options.measure }),
    }));
  } catch (error) {
    if (!(error instanceof UsageError || error instanceof ConfigError)) throw error;
    process.stderr.write(`${SCRIPT}: ${error.message}\n\nRun with --help for usage.\n`);
    return 2;
  }
  const plugins = await loadPluginList(options.plugins);
  const reference = loadReference(dir);
  const byPoint = new Map(reference.map((point) => [`${seriesKey(point)}|${point.offered}`, point]));
  const points: MeasuredPoint[] = [];
  for (const run of runs) {
    const series = runSeries(run, options.router, plugins);
    printPoints(series, byPoint);
    process.stdout.write("\n");
    points.push(...series);
  }
  const { judged, misses } = printVerdicts(points, reference);
  const events = points.reduce((sum, point) => sum + point.eventsPerPacket, 0) / points.length;
  const speed = points.reduce((sum, point) => sum + point.packetsPerSecond, 0) / points.length;
  process.stdout.write(
    `\n${verdictOf(judged, misses, dir)}; ${fixed(events, 2)} engine events per packet, ${fixed(speed / 1000, 1)} k packets per CPU second (mean over points)\n`,
  );
  if (options.json !== undefined) {
    writeJson(options.json, {
      points: points.map(({ eventsPerPacket, packetsPerSecond, unfinished, ...point }) => point),
      summary: bySeries(points).map((series) => summarise(series)),
    });
  }
  return 0;
}

async function loadPluginList(entries: readonly string[]): Promise<KbPlugin[]> {
  if (entries.length === 0) return [];
  const { loadPlugins } = await import("@kb/components/node");
  return loadPlugins(entries, { from: [process.cwd()], relativeTo: process.cwd() });
}
