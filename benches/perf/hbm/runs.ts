// The runs of `pnpm bench:hbm`: the traces to run, each configuration's closed loop at the memory
// on each of them, and the tile pattern through whole machines (--whole-machine).
import type { KbPlugin } from "@kb/components";
import { MemoryHarness } from "@kb/probe";
import { expandTopology, resolveTopology, type Topology } from "@kb/topology";
import { loadTopologyFile } from "@kb/topology/node";
import { topologyFile } from "../report.js";
import { type BenchConfig, chooseImpl } from "./configs.js";
import { runClosedLoop } from "./driver.js";
import {
  energyRecord,
  type HbmEnergy,
  kernbenchEnergy,
  runFolder,
  startCommandLogs,
  writeDramTrace,
} from "./energy.js";
import { type Options, UsageError, userPath } from "./options.js";
import { type BenchRecord, record, startClock } from "./record.js";
import { type ReferenceTable, referenceKey } from "./reference.js";
import { fixed, mark, printConfig, progress } from "./tables.js";
import { listPatterns, patternTrace, readTrace, type Trace } from "./trace.js";
import { runWholeMachine } from "./whole-machine.js";

/** A trace to run: a pattern of patterns.mjs (generated lazily) or a file. */
export interface TraceSource {
  readonly label: string;
  readonly load: () => Trace;
}

/**
 * The traces to run: the --trace files, then each pattern (--pattern, else all of patterns.mjs
 * unless --trace is given) in each mix. Throws a {@link UsageError} when the fidelity folder
 * `dir` is needed and missing, or a pattern is unknown.
 */
export function traceSources(options: Options, dir: string | undefined): TraceSource[] {
  const sources: TraceSource[] = [];
  for (const file of options.traces) sources.push({ label: file, load: () => readTrace(userPath(file)) });
  const wantPatterns = options.patterns ?? (options.traces.length > 0 ? [] : undefined);
  if (wantPatterns === undefined || wantPatterns.length > 0) {
    if (dir === undefined) {
      throw new UsageError(
        "cannot find the fidelity folder (patterns.mjs); pass --fidelity DIR or --trace FILE.",
      );
    }
    const available = listPatterns(dir);
    const patterns = wantPatterns ?? available;
    for (const pattern of patterns) {
      if (!available.includes(pattern)) {
        throw new UsageError(`unknown pattern "${pattern}" (patterns.mjs has ${available.join(", ")}).`);
      }
      for (const mix of options.mixes) {
        sources.push({ label: `${pattern} ${mix}`, load: () => readTrace(patternTrace(dir, pattern, mix)) });
      }
    }
  }
  return sources;
}

/** What every run needs besides its configuration and trace. */
export interface RunContext {
  readonly options: Options;
  readonly plugins: readonly KbPlugin[];
  readonly commit: string | null;
  /** Each run's failure, as a line to report. */
  readonly failures: string[];
  /** DRAMPower's energy per run (drampower.json), for --energy. */
  readonly drampower: ReadonlyMap<string, HbmEnergy>;
}

/**
 * Runs every trace of `sources` on every configuration through the closed loop at the memory
 * (MemoryHarness), printing each configuration's line and the progress; returns the records.
 */
export function runFidelity(
  configs: readonly BenchConfig[],
  sources: readonly TraceSource[],
  reference: ReferenceTable,
  context: RunContext,
): BenchRecord[] {
  const { options, plugins, commit, failures } = context;
  const traces = new Map<TraceSource, Trace>();
  const traceOf = (source: TraceSource): Trace => {
    let trace = traces.get(source);
    if (trace === undefined) {
      trace = source.load();
      traces.set(source, trace);
    }
    return trace;
  };
  const rows: BenchRecord[] = [];
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
    printConfig(config, choice, peak);
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
        const model = harness.memory.model;
        const logs = options.dramTrace !== undefined ? startCommandLogs(model) : null;
        const clock = startClock();
        const figures = runClosedLoop(trace, harness, {
          tckNs: config.meta.tckNs,
          peakGbs: peak,
          partialLines: options.partialLines ?? config.meta.partialLines,
        });
        const { wallS, cpuS } = clock();
        const ref = reference.get(referenceKey(config.name, trace.pattern, trace.mix));
        const row = record(config, trace, choice.impl, figures, wallS, cpuS, choice.note, ref, commit);
        const endNs = harness.machine.env.now;
        if (logs !== null && options.dramTrace !== undefined) {
          writeDramTrace(
            options.dramTrace,
            runFolder(config.name, trace.pattern, trace.mix),
            model,
            logs,
            endNs,
          );
        }
        const own = options.energy || options.dramTrace !== undefined ? kernbenchEnergy(model, endNs) : null;
        if (own !== null) {
          const key = `${config.name} ${trace.pattern} ${trace.mix}`;
          row.energy = energyRecord(own, context.drampower.get(key), endNs);
        }
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
  return rows;
}

/**
 * The tile pattern (or the --trace files) through whole machines on ref-cube (with each
 * --config's cube.hbm when given): PE DMAs -> fabric -> HBM. Returns the records.
 */
export function runWholeMachines(
  configs: readonly BenchConfig[],
  dir: string | undefined,
  context: RunContext,
): BenchRecord[] {
  const { options, plugins, commit, failures } = context;
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
              meta: { status: "custom", tckNs: options.tck ?? 0.3125, reference: "-", partialLines: false },
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
