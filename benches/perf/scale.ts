/**
 * The weak-scaling suite: `pnpm bench:scale [--case NAME] [--pes LIST] [--elements N] [--runs N]
 * [--json FILE]`.
 *
 * Runs the `vector-add` bench (benches/vector-add.ts, through `Simulator` as `kb run vector-add`
 * does) with the same number of elements on every PE of machines of 256, 1024, 4096 and 8192
 * PEs, built from topologies/ref-4sip.yaml with 16 cubes per SIP and 1, 4, 16 or 32 SIPs (16
 * PEs per cube, 4 x 4 NOC, everything else as in the file). Each size runs in a child process
 * of its own, so its peak RSS is its own.
 *
 * Every size is checked: a separate child runs it once more with an op logger, replays the op
 * log (phase 2) and verifies every cube's slice of `out` against the host reference; that run
 * and every timed run must give the same simulated time and DES event count. A failed check
 * exits with code 1.
 */
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { MemorySink, OpLogger } from "@kb/oplog";
import { replay, Simulator, verifyOutcome } from "@kb/runtime";
import { parseTopology, type Topology } from "@kb/topology";
import vectorAdd from "../vector-add.js";
import {
  failUsage,
  median,
  parseSuiteOptions,
  printTable,
  spawnChildReport,
  topologyFile,
  writeJson,
} from "./report.js";

const SCRIPT = "bench:scale";

/** PEs per cube (ref-4sip.yaml's 4 x 4 NOC) and cubes per SIP of every case. */
const PES_PER_CUBE = 16;
const CUBES_PER_SIP = 16;

/** The cases: PEs and the SIPs that give them (x 16 cubes x 16 PEs). */
export const SCALE_CASES = [
  { name: "256", pes: 256, sips: 1 },
  { name: "1024", pes: 1024, sips: 4 },
  { name: "4096", pes: 4096, sips: 16 },
  { name: "8192", pes: 8192, sips: 32 },
] as const;

const DEFAULT_ELEMENTS = 4096;
const CHUNK = 8192;

const USAGE = `Usage: pnpm ${SCRIPT} [--case NAME | --pes LIST] [--elements N] [--runs N] [--json FILE]

Weak scaling: vector-add (f16, out = x + y) with the same elements on every PE, through
@kb/runtime's Simulator as \`kb run vector-add\` runs it (phase 1), on topologies/ref-4sip.yaml
with sip.cubes = 16 and system.sips = 1, 4, 16, 32 (16 PEs per cube, 4 x 4 NOC; UCIe ring of the
16 cubes, SIPs all-to-all; every other number as in the file):

  256    1 SIP  x 16 cubes x 16 PEs
  1024   4 SIPs x 16 cubes x 16 PEs
  4096  16 SIPs x 16 cubes x 16 PEs
  8192  32 SIPs x 16 cubes x 16 PEs

  --case NAME      run only this size (${SCALE_CASES.map((c) => c.name).join(", ")})
  --pes LIST       run these sizes, comma-separated (default: all four)
  --elements N     elements per PE (default ${DEFAULT_ELEMENTS}; chunks of ${CHUNK})
  --runs N         timed runs per size, after one warm-up run on the 256-PE machine (default 1)
  --json FILE      also write the results as a JSON array
  --help           show this help

Each size runs in a child process of its own (node --expose-gc); "peak RSS" is that child's
max RSS. "wall s" is bench.run (host copies and the launch), "cpu s" the process's CPU time
during it (steadier than wall time on a shared machine), "events/s" DES events over wall s,
"build ms" the machine's construction (expand + buildMachine). Each size is checked in another
child: one more run with an op logger, phase 2 replay and verification of out against the host
reference; it and every timed run must give the same simulated time and DES events. A failed
check exits 1. (--child SIPS --mode timed|check runs one child's part; the suite passes them.)`;

/** One timed or checked run of one size. */
export interface ScaleRun {
  /** Simulated end time, ns. */
  simNs: number;
  /** DES events processed during bench.run. */
  events: number;
  /** Topology expansion and machine construction, ms. */
  buildMs: number;
  /** bench.run (host copies, launch), s. */
  wallS: number;
  /** CPU time of the process (user + system) during bench.run, s: less noisy than wallS on a shared machine. */
  cpuS: number;
  /** Checked runs only: whether phase 2 verified every output, and the failures. */
  verified?: boolean;
  problems?: string[];
}

/** One row of the table and the JSON output. */
interface ScaleResult {
  bench: "scale";
  topology: string;
  params: { elementsPerPe: number; chunk: number; dtype: "f16" };
  pes: number;
  sips: number;
  elements: number;
  simNs: number;
  events: number;
  buildMedianMs: number;
  wallMedianS: number;
  wallS: number[];
  cpuMedianS: number;
  eventsPerS: number;
  /** eventsPerS over the 256-PE row's (null when that row did not run). */
  relative: number | null;
  /** Peak RSS of the child that ran the timed runs, bytes. */
  peakRssBytes: number;
  verified: boolean;
}

/**
 * topologies/ref-4sip.yaml with `sips` SIPs of 16 cubes each (named `scale-<PEs>`): 16 PEs per
 * cube, so `sips * 256` PEs.
 */
export function scaleTopology(sips: number): Topology {
  const file = topologyFile("ref-4sip.yaml");
  const base = parseTopology(readFileSync(file, "utf8"), file);
  return {
    ...base,
    name: `scale-${sips * CUBES_PER_SIP * PES_PER_CUBE}`,
    description: `ref-4sip.yaml with ${sips} SIPs x ${CUBES_PER_SIP} cubes x ${PES_PER_CUBE} PEs`,
    system: { ...base.system, sips },
    sip: { ...base.sip, cubes: CUBES_PER_SIP },
  };
}

/**
 * Runs vector-add with `elementsPerPe` elements on every PE of `topology` (phase 1, as `kb run
 * vector-add`); with `verify`, also with an op logger, replays phase 2 and verifies `out`.
 */
export async function runScale(
  topology: Topology,
  elementsPerPe: number,
  verify: boolean,
): Promise<ScaleRun> {
  const pes = topology.system.sips * topology.sip.cubes * topology.cube.noc.rows * topology.cube.noc.cols;
  const sink = verify ? new MemorySink() : null;
  const buildStart = process.hrtime.bigint();
  const sim = await Simulator.fromTopology(topology, { opLogger: sink === null ? null : new OpLogger(sink) });
  const buildMs = Number(process.hrtime.bigint() - buildStart) / 1e6;
  const params = vectorAdd.params.parse({
    n: elementsPerPe * pes,
    chunk: Math.min(CHUNK, elementsPerPe),
    dtype: "f16",
  });
  const eventsBefore = sim.machine.env.processedEventCount;
  const cpuBefore = process.cpuUsage();
  const start = process.hrtime.bigint();
  const outcome = await vectorAdd.run(sim, params);
  const wallS = Number(process.hrtime.bigint() - start) / 1e9;
  const cpu = process.cpuUsage(cpuBefore);
  const run: ScaleRun = {
    simNs: sim.now,
    events: sim.machine.env.processedEventCount - eventsBefore,
    buildMs,
    wallS,
    cpuS: (cpu.user + cpu.system) / 1e6,
  };
  if (sink !== null) {
    const phase2 = replay(sim.hostWrites, sink.records);
    const report = await verifyOutcome(outcome ?? undefined, phase2.store);
    run.verified = report.pass && report.outputs.length === topology.system.sips * topology.sip.cubes;
    run.problems = report.outputs
      .filter((output) => !output.pass)
      .slice(0, 5)
      .map((output) => `${output.name}: first mismatch ${JSON.stringify(output.firstMismatch)}`);
    if (report.outputs.length !== topology.system.sips * topology.sip.cubes)
      run.problems.push(`${report.outputs.length} outputs checked, expected one per cube`);
  }
  return run;
}

function fail(message: string): never {
  return failUsage(SCRIPT, message);
}

/** A full collection when node runs with --expose-gc (the bench:scale script does). */
function collectGarbage(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

function formatRate(perSecond: number): string {
  return perSecond >= 1e6 ? `${(perSecond / 1e6).toFixed(3)} M` : `${(perSecond / 1e3).toFixed(1)} k`;
}

/** What a child prints as its last line: its runs and its max RSS. */
interface ChildReport {
  runs: ScaleRun[];
  maxRssBytes: number;
}

/** The child: `--child SIPS --mode timed|check` runs one size and prints a ChildReport line. */
async function child(sips: number, mode: string, elementsPerPe: number, runs: number): Promise<void> {
  const topology = scaleTopology(sips);
  const results: ScaleRun[] = [];
  if (mode === "check") {
    results.push(await runScale(topology, elementsPerPe, true));
  } else {
    // Warm-up on the smallest machine, so the first timed run does not pay for the JIT.
    await runScale(scaleTopology(1), elementsPerPe, false);
    for (let run = 0; run < runs; run++) {
      collectGarbage();
      results.push(await runScale(topology, elementsPerPe, false));
    }
  }
  const report: ChildReport = { runs: results, maxRssBytes: process.resourceUsage().maxRSS * 1024 };
  process.stdout.write(`${JSON.stringify(report)}\n`);
}

/** Runs this script in a child process with `args`; returns its report (exits 1 if it failed). */
function spawnChild(args: readonly string[], what: string): ChildReport {
  return spawnChildReport<ChildReport>(SCRIPT, import.meta.url, args, what);
}

function positiveInt(name: string, text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback;
  const value = Number(text.replaceAll("_", ""));
  if (!Number.isInteger(value) || value < 1) fail(`--${name} must be a positive integer, got "${text}"`);
  return value;
}

async function main(): Promise<void> {
  const parsed = parseSuiteOptions(SCRIPT, USAGE, ["case", "pes", "elements", "child", "mode"], 1);
  if (parsed === null) return;
  const { runs, extra } = parsed;
  const elementsPerPe = positiveInt("elements", extra.elements, DEFAULT_ELEMENTS);
  if (extra.child !== undefined) {
    await child(positiveInt("child", extra.child, 1), extra.mode ?? "timed", elementsPerPe, runs);
    return;
  }
  if (extra.case !== undefined && extra.pes !== undefined) fail("give --case or --pes, not both");
  const names = (extra.case ?? extra.pes)?.split(",").map((name) => name.trim());
  for (const name of names ?? []) {
    if (!SCALE_CASES.some((scaleCase) => scaleCase.name === name))
      fail(`unknown size "${name}"; the sizes are ${SCALE_CASES.map((c) => c.name).join(", ")}`);
  }
  const cases = SCALE_CASES.filter((scaleCase) => names === undefined || names.includes(scaleCase.name));

  process.stdout.write(
    `weak scaling: vector-add, ${elementsPerPe} f16 elements per PE, ${runs} timed run(s) per size, each size in its own child process (node ${process.version})\n\n`,
  );
  const results: ScaleResult[] = [];
  const problems: string[] = [];
  for (const scaleCase of cases) {
    const common = ["--child", String(scaleCase.sips), "--elements", String(elementsPerPe)];
    const timed = spawnChild(
      [...common, "--mode", "timed", "--runs", String(runs)],
      `${scaleCase.name}-PE timed`,
    );
    const checked = spawnChild([...common, "--mode", "check"], `${scaleCase.name}-PE check`);
    const check = checked.runs[0] as ScaleRun;
    if (check.verified !== true)
      problems.push(`${scaleCase.name} PEs: phase 2 did not verify: ${(check.problems ?? []).join("; ")}`);
    for (const run of timed.runs) {
      if (run.simNs !== check.simNs || run.events !== check.events)
        problems.push(
          `${scaleCase.name} PEs: a timed run gave ${run.simNs} ns / ${run.events} events, the checked run ${check.simNs} ns / ${check.events}: not deterministic`,
        );
    }
    const first = timed.runs[0] as ScaleRun;
    const wallS = timed.runs.map((run) => run.wallS);
    const wallMedianS = median(wallS);
    results.push({
      bench: "scale",
      topology: scaleTopology(scaleCase.sips).name,
      params: { elementsPerPe, chunk: Math.min(CHUNK, elementsPerPe), dtype: "f16" },
      pes: scaleCase.pes,
      sips: scaleCase.sips,
      elements: elementsPerPe * scaleCase.pes,
      simNs: first.simNs,
      events: first.events,
      buildMedianMs: median(timed.runs.map((run) => run.buildMs)),
      wallMedianS,
      wallS,
      cpuMedianS: median(timed.runs.map((run) => run.cpuS)),
      eventsPerS: first.events / wallMedianS,
      relative: null,
      peakRssBytes: timed.maxRssBytes,
      verified: check.verified === true,
    });
  }
  const base = results.find((result) => result.pes === 256);
  for (const result of results)
    result.relative = base === undefined ? null : result.eventsPerS / base.eventsPerS;

  printTable(
    [
      "PEs",
      "SIPs",
      "elements",
      "sim ns",
      "events",
      "build ms",
      "wall s",
      "cpu s",
      "events/s",
      "vs 256",
      "peak RSS MiB",
      "check",
    ],
    results.map((result) => [
      String(result.pes),
      String(result.sips),
      String(result.elements),
      result.simNs.toFixed(2),
      String(result.events),
      result.buildMedianMs.toFixed(0),
      result.wallMedianS.toFixed(2),
      result.cpuMedianS.toFixed(2),
      formatRate(result.eventsPerS),
      result.relative === null ? "-" : `${(result.relative * 100).toFixed(0)}%`,
      (result.peakRssBytes / 2 ** 20).toFixed(0),
      result.verified ? "PASS" : "FAIL",
    ]),
    0,
  );
  if (parsed.json !== undefined) writeJson(parsed.json, results);
  if (problems.length > 0) {
    process.stderr.write(`\n${SCRIPT}: checks failed:\n  ${problems.join("\n  ")}\n`);
    process.exit(1);
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
