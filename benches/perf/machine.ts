/**
 * The @kb/components speed suite: `pnpm bench:machine [--case NAME] [--tokens N]
 * [--oplog-tokens N] [--runs N] [--json FILE]`.
 *
 * Drives whole machines built from the repository's topologies with composite GEMM commands and
 * measures how fast the engine moves tile tokens through the PE pipeline (DMA_READ -> FETCH ->
 * GEMM -> STORE, plus DMA_WRITE on the last K tile of each output tile):
 *
 * - `1pe`: one PE of topologies/default.yaml runs commands totalling `--tokens` tile tokens;
 * - `256pe`: the same tokens spread evenly over the 256 PEs of topologies/ref-4sip.yaml, started
 *   by `machine.launch` (host -> IO_CPU -> M_CPU -> PE_CPU, global start barrier);
 * - `oplog`: the `1pe` workload with `--oplog-tokens` tokens, without an op logger and with an
 *   `OpLogger` whose sink discards every record: what attaching a logger costs.
 *
 * Every run is checked: the submit/launch event succeeded, PE_GEMM serviced exactly one tile per
 * token, PE_DMA one read per token plus one write per output tile, PE_FETCH_STORE one fetch and
 * one store per token, the logger (when attached) wrote the expected number of records, the
 * simulated time is no shorter than the GEMM tiles back to back, and repeated runs give the same
 * simulated time and event count. A failed check exits with code 1.
 */

import { defaultRegistry } from "@kb/builtins";
import { buildMachine, type CompositeGemmCommand, gemmTimingOf, type Machine } from "@kb/components";
import { OpLogger, type OpLogSink } from "@kb/oplog";
import { encodeAddress, type TopologyGraph } from "@kb/topology";
import { loadTopologyGraphFile } from "@kb/topology/node";
import { pipeline } from "./des/workloads.js";
import { failUsage, median, parseSuiteOptions, printTable, topologyFile, writeJson } from "./report.js";

const CASES = ["1pe", "256pe", "oplog"] as const;
type CaseName = (typeof CASES)[number];

const USAGE = `Usage: pnpm bench:machine [--case NAME] [--tokens N] [--oplog-tokens N] [--runs N] [--json FILE]

Moves tile tokens through composite GEMM pipelines on whole machines (128 x 128 x 128 f16 tiles)
and prints simulated time, DES events and speed:

  1pe     one PE of topologies/default.yaml, --tokens tile tokens
  256pe   the same tokens split evenly over the 256 PEs of topologies/ref-4sip.yaml (launch)
  oplog   the 1pe workload with --oplog-tokens tokens, with no op logger and with an OpLogger
          whose sink discards the records: the cost of the op-log hooks

  --case NAME          run only this case (${CASES.join(", ")})
  --tokens N           tile tokens of the 1pe and 256pe cases (default 1000000)
  --oplog-tokens N     tile tokens of the oplog case (default 100000)
  --runs N             timed runs per case after one warm-up run of at most 20000 tokens (default 3)
  --json FILE          also write the results as a JSON array
  --help               show this help

Each run is checked (the command completed, one GEMM per token, DMA and fetch/store counts,
op-record counts, simulated time >= the GEMM tiles back to back, same result every run); a
failed check exits with code 1. Last, the bare engine runs bench:des's pipeline workload in the
same process, and the machine's tokens/s are printed relative to its tokens/s.`;

/** Composite GEMM tile edge (the pe_scheduler_v2 default) and the command geometry in tiles. */
const TILE = 128;
/** Tiles per full command: 10 x 10 x 10 (M = N = K = 1280). */
const FULL = 10;
const TILES_PER_COMMAND = FULL * FULL * FULL;
/** Bytes of HBM each PE's operands may use (A, B, C of its largest command fit in 48 MiB). */
const PE_REGION = 64 * 2 ** 20;
const A_OFFSET = 0;
const B_OFFSET = 4 * 2 ** 20;
const C_OFFSET = 40 * 2 ** 20;
/** The most tokens a warm-up run uses: enough for the JIT, cheap beside a 1 M-token run. */
const WARMUP_TOKENS = 20000;

/** One row of the JSON output. */
interface BenchResult {
  bench: string;
  topology: string;
  params: Record<string, number | string>;
  units: string;
  pes: number;
  tokens: number;
  commands: number;
  /** Simulated end time, ns. */
  simEnd: number;
  events: number;
  opRecords: number | null;
  /** Tokens/s of the bare engine (bench:des pipeline) measured in the same process. */
  engineTokensPerS?: number;
  /** Machine construction (not part of wallMedianS), ms. */
  buildMedianMs: number;
  wallMedianS: number;
  wallS: number[];
  tokensPerS: number;
  eventsPerS: number;
  /** oplog-discard only: wall time over oplog-none's, minus 1, in % (ratio of the medians). */
  overheadPct?: number;
}

/** A full collection when node runs with --expose-gc (the bench:machine script does). */
function collectGarbage(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

function fail(message: string): never {
  return failUsage("bench:machine", message);
}

function positiveInt(name: string, text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback;
  const value = Number(text.replaceAll("_", ""));
  if (!Number.isInteger(value) || value < 1) fail(`--${name} must be a positive integer, got "${text}"`);
  return value;
}

/** What a PE's command list adds up to. */
interface Work {
  readonly commands: number;
  readonly tokens: number;
  /** Output tiles (each ends with a DMA_WRITE). */
  readonly outputTiles: number;
}

/**
 * Composite GEMM commands on PE `peId` whose tiles add up to `tokens`: full 10 x 10 x 10-tile
 * commands, then for the rest r: a 1 x floor(r / 10) x 10 command and a 1 x 1 x (r mod 10) one.
 * Operands live in the PE's own cube, in a 64 MiB region per PE. All commands are async, so the
 * pipeline never drains between them.
 */
function gemmProgram(graph: TopologyGraph, peId: string, tokens: number): [CompositeGemmCommand[], Work] {
  const node = graph.node(peId);
  const sip = node.sip as number;
  const cube = node.cube as number;
  const base = (node.pe as number) * PE_REGION;
  const hbm = (offset: number) => encodeAddress({ sip, cube, space: "hbm", offset: base + offset });
  const commands: CompositeGemmCommand[] = [];
  let outputTiles = 0;
  const add = (tilesM: number, tilesN: number, tilesK: number) => {
    commands.push({
      kind: "composite_gemm",
      a: hbm(A_OFFSET),
      b: hbm(B_OFFSET),
      c: hbm(C_OFFSET),
      m: tilesM * TILE,
      n: tilesN * TILE,
      k: tilesK * TILE,
      dtype: "f16",
      tile: { m: TILE, n: TILE, k: TILE },
      async: true,
    });
    outputTiles += tilesM * tilesN;
  };
  for (let i = 0; i < Math.floor(tokens / TILES_PER_COMMAND); i++) add(FULL, FULL, FULL);
  const rest = tokens % TILES_PER_COMMAND;
  if (rest >= FULL) add(1, Math.floor(rest / FULL), FULL);
  if (rest % FULL > 0) add(1, 1, rest % FULL);
  return [commands, { commands: commands.length, tokens, outputTiles }];
}

/** An op-log sink that drops every record (counts them, so the run can be checked). */
class DiscardSink implements OpLogSink {
  written = 0;
  write(): void {
    this.written++;
  }
}

/** One run's outcome. */
interface RunResult {
  simEnd: number;
  events: number;
  opRecords: number | null;
  buildMs: number;
  wallS: number;
}

/** Returns the problems with a finished run (empty when it is right). */
function checkMachine(machine: Machine, pes: readonly string[], works: readonly Work[]): string[] {
  const problems: string[] = [];
  const stats = machine.stats();
  const byId = new Map(stats.components.map((report) => [report.id, report]));
  const ops = (id: string) => byId.get(id)?.ops ?? -1;
  let slowest = 0;
  pes.forEach((pe, index) => {
    const work = works[index] as Work;
    const expect = (what: string, got: number, want: number) => {
      if (got !== want) problems.push(`${pe}: ${what} ${got}, expected ${want}`);
    };
    expect("pe_gemm tiles", ops(`${pe}.pe_gemm`), work.tokens);
    expect("pe_dma stages", ops(`${pe}.pe_dma`), work.tokens + work.outputTiles);
    expect("pe_fetch_store stages", ops(`${pe}.pe_fetch_store`), 2 * work.tokens);
    expect("pe_scheduler commands", ops(`${pe}.pe_scheduler`), work.commands);
    // The impl's own formula (pe_gemm_v1 on default.yaml, pe_gemm_v2 on ref-4sip.yaml).
    const timing = gemmTimingOf(machine.component(`${pe}.pe_gemm`));
    const tileNs = timing === null ? 0 : timing.gemmCycles(TILE, TILE, TILE, "f16") / timing.freqGhz;
    slowest = Math.max(slowest, work.tokens * tileNs);
  });
  if (stats.simTimeNs < slowest) {
    problems.push(
      `simulated ${stats.simTimeNs} ns, less than the ${slowest} ns its busiest PE_GEMM needs for its tiles back to back`,
    );
  }
  return problems;
}

interface Workload {
  readonly graph: TopologyGraph;
  readonly pes: readonly string[];
  /** Tokens of each PE. */
  readonly split: (tokens: number) => number[];
  /** launch through the host (true) or submit to the PE_CPU directly. */
  readonly launch: boolean;
}

function runOnce(workload: Workload, tokens: number, logged: boolean): RunResult {
  const { graph, pes } = workload;
  const split = workload.split(tokens);
  const programs = pes.map((pe, index) => gemmProgram(graph, pe, split[index] as number));
  const works = programs.map(([, work]) => work);
  const sink = logged ? new DiscardSink() : null;
  const logger = sink === null ? null : new OpLogger(sink);
  const buildStart = process.hrtime.bigint();
  const machine = buildMachine(graph, { registry: defaultRegistry(), opLogger: logger });
  const buildMs = Number(process.hrtime.bigint() - buildStart) / 1e6;
  const eventsBefore = machine.env.processedEventCount;
  const start = process.hrtime.bigint();
  const done = workload.launch
    ? machine.launch({ pes, program: (_pe, index) => (programs[index] as [CompositeGemmCommand[], Work])[0] })
    : machine.submit(pes[0] as string, (programs[0] as [CompositeGemmCommand[], Work])[0]);
  machine.run(done);
  const wallS = Number(process.hrtime.bigint() - start) / 1e9;
  const problems = done.processed && done.ok ? [] : ["the submit/launch event did not succeed"];
  problems.push(...checkMachine(machine, pes, works));
  let opRecords: number | null = null;
  if (logger !== null && sink !== null) {
    logger.close();
    opRecords = sink.written;
    // Per tile: two DMA_READ copies and the GEMM; per output tile: the store's cast (f32 -> f16)
    // and the DMA_WRITE copy.
    const expected = works.reduce((sum, work) => sum + 3 * work.tokens + 2 * work.outputTiles, 0);
    if (opRecords !== expected) problems.push(`op log has ${opRecords} records, expected ${expected}`);
  }
  if (problems.length > 0) {
    process.stderr.write(
      `bench:machine: a run of ${tokens} tokens failed its checks:\n  ${problems.join("\n  ")}\n`,
    );
    process.exit(1);
  }
  return {
    simEnd: machine.env.now,
    events: machine.env.processedEventCount - eventsBefore,
    opRecords,
    buildMs,
    wallS,
  };
}

function formatRate(perSecond: number): string {
  return perSecond >= 1e6 ? `${(perSecond / 1e6).toFixed(3)} M` : `${(perSecond / 1e3).toFixed(1)} k`;
}

/** One row of a measurement: a name and whether an op logger is attached. */
interface Variant {
  readonly name: string;
  readonly logged: boolean;
}

/**
 * Measures `variants` of one workload: a warm-up run of each, then `runs` rounds in which every
 * variant runs once on a fresh machine after a full GC. Interleaving the variants exposes them to
 * the same background load, so their ratio is fairer than with back-to-back series.
 */
function measure(
  topology: string,
  workload: Workload,
  tokens: number,
  variants: readonly Variant[],
  runs: number,
): BenchResult[] {
  for (const variant of variants) {
    collectGarbage();
    runOnce(workload, Math.min(tokens, WARMUP_TOKENS), variant.logged);
  }
  const results: RunResult[][] = variants.map(() => []);
  for (let run = 0; run < runs; run++) {
    variants.forEach((variant, index) => {
      collectGarbage();
      const result = runOnce(workload, tokens, variant.logged);
      const list = results[index] as RunResult[];
      const first = list[0];
      if (first !== undefined && (first.simEnd !== result.simEnd || first.events !== result.events)) {
        process.stderr.write(
          `bench:machine: ${variant.name} gave different results on two runs (${first.simEnd} ns / ${first.events} events vs ${result.simEnd} / ${result.events}): the machine is not deterministic\n`,
        );
        process.exit(1);
      }
      list.push(result);
    });
  }
  const split = workload.split(tokens);
  const commands = workload.pes.reduce(
    (sum, pe, index) => sum + gemmProgram(workload.graph, pe, split[index] as number)[1].commands,
    0,
  );
  return variants.map((variant, index) => {
    const list = results[index] as RunResult[];
    const first = list[0] as RunResult;
    const wallS = list.map((result) => result.wallS);
    const wallMedianS = median(wallS);
    return {
      bench: variant.name,
      topology,
      params: {
        tokens,
        tile: `${TILE}x${TILE}x${TILE}`,
        dtype: "f16",
        oplog: variant.logged ? "discard" : "none",
      },
      units: "tile tokens",
      pes: workload.pes.length,
      tokens,
      commands,
      simEnd: first.simEnd,
      events: first.events,
      opRecords: first.opRecords,
      buildMedianMs: median(list.map((result) => result.buildMs)),
      wallMedianS,
      wallS,
      tokensPerS: tokens / wallMedianS,
      eventsPerS: first.events / wallMedianS,
    };
  });
}

function main(): void {
  const parsed = parseSuiteOptions("bench:machine", USAGE, ["case", "tokens", "oplog-tokens"], 3);
  if (parsed === null) return;
  const { runs } = parsed;
  const only = parsed.extra.case;
  if (only !== undefined && !(CASES as readonly string[]).includes(only))
    fail(`unknown case "${only}"; the cases are ${CASES.join(", ")}`);
  const tokens = positiveInt("tokens", parsed.extra.tokens, 1_000_000);
  const oplogTokens = positiveInt("oplog-tokens", parsed.extra["oplog-tokens"], 100_000);
  const wanted = (name: CaseName) => only === undefined || only === name;

  process.stdout.write(
    `@kb/components machine suite: ${runs} timed run(s) per case after one warm-up (node ${process.version})\n\n`,
  );
  const results: BenchResult[] = [];
  const onePe = (): Workload => ({
    graph: loadTopologyGraphFile(topologyFile("default.yaml")).graph,
    pes: ["sip0.cube0.pe0"],
    split: (n) => [n],
    launch: false,
  });
  if (wanted("1pe"))
    results.push(...measure("default.yaml", onePe(), tokens, [{ name: "1pe", logged: false }], runs));
  if (wanted("256pe")) {
    const { graph } = loadTopologyGraphFile(topologyFile("ref-4sip.yaml"));
    const pes = graph.nodes.filter((node) => node.kind === "pe").map((node) => node.id);
    const split = (n: number) =>
      pes.map((_, index) => Math.floor(n / pes.length) + (index < n % pes.length ? 1 : 0));
    const workload: Workload = { graph, pes, split, launch: true };
    results.push(...measure("ref-4sip.yaml", workload, tokens, [{ name: "256pe", logged: false }], runs));
  }
  let overhead: { medians: number; paired: number } | null = null;
  if (wanted("oplog")) {
    const [none, logged] = measure(
      "default.yaml",
      onePe(),
      oplogTokens,
      [
        { name: "oplog-none", logged: false },
        { name: "oplog-discard", logged: true },
      ],
      runs,
    ) as [BenchResult, BenchResult];
    if (none.simEnd !== logged.simEnd || none.events !== logged.events) {
      fail(
        `attaching an op logger changed the simulation (${none.simEnd} ns / ${none.events} events without, ${logged.simEnd} / ${logged.events} with)`,
      );
    }
    // Ratio of the medians, and the median of the per-round ratios (rounds ran back to back).
    overhead = {
      medians: (logged.wallMedianS / none.wallMedianS - 1) * 100,
      paired: (median(logged.wallS.map((wall, round) => wall / (none.wallS[round] as number))) - 1) * 100,
    };
    logged.overheadPct = overhead.medians;
    results.push(none, logged);
  }

  printTable(
    [
      "case",
      "topology",
      "PEs",
      "tokens",
      "commands",
      "sim ns",
      "events",
      "op records",
      "build ms",
      "wall median s",
      "tokens/s",
      "events/s",
    ],
    results.map((result) => [
      result.bench,
      result.topology,
      String(result.pes),
      String(result.tokens),
      String(result.commands),
      result.simEnd.toFixed(2),
      String(result.events),
      result.opRecords === null ? "-" : String(result.opRecords),
      result.buildMedianMs.toFixed(1),
      result.wallMedianS.toFixed(3),
      formatRate(result.tokensPerS),
      formatRate(result.eventsPerS),
    ]),
    2,
  );
  if (overhead !== null) {
    process.stdout.write(
      `\nop-log hooks (${oplogTokens} tokens, same simulation): an OpLogger with a discarding sink costs ${overhead.medians.toFixed(1)}% wall time (ratio of medians; median of per-round ratios ${overhead.paired.toFixed(1)}%)\n`,
    );
  }
  // The bare engine in the same process: bench:des's pipeline workload (its defaults), the yardstick
  // of issue 14's target (machine tokens/s over engine tokens/s).
  const engine = measureEngine(runs);
  process.stdout.write(
    `\nbare engine (bench:des pipeline, ${pipeline.defaults.T} tokens, median of ${runs}): ${formatRate(engine)} tokens/s; machine tokens/s relative to it: ${results
      .filter((result) => result.bench === "1pe" || result.bench === "256pe")
      .map((result) => `${result.bench} ${(result.tokensPerS / engine).toFixed(4)}`)
      .join(", ")}\n`,
  );
  for (const result of results) result.engineTokensPerS = engine;
  if (parsed.json !== undefined) writeJson(parsed.json, results);
}

/** Tokens/s of bench:des's pipeline workload on its defaults: one warm-up, median of `runs`. */
function measureEngine(runs: number): number {
  pipeline.run(pipeline.defaults);
  const walls: number[] = [];
  for (let run = 0; run < runs; run++) {
    const start = process.hrtime.bigint();
    pipeline.run(pipeline.defaults);
    walls.push(Number(process.hrtime.bigint() - start) / 1e9);
  }
  return (pipeline.defaults.T as number) / median(walls);
}

main();
