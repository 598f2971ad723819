/**
 * The @kb/topology speed suite: `pnpm bench:topology [--case NAME] [--runs N] [--json FILE]`.
 *
 * For each design point of cases.ts: load (or resolve) the topology, expand it, route every PE's
 * DMA to every HBM channel of every cube (cold: searches and route objects), then route them all
 * again (warm: cache hits). Prints a table with the median wall time of each phase over `--runs`
 * fresh runs and optionally writes it as JSON. Node, edge and route counts are checked against
 * the hand counts of cases.ts, and the latency checksum must agree between runs. Nothing here
 * asserts a speed.
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { expandTopology, resolveTopology, type Topology } from "@kb/topology";
import { loadTopologyFile } from "@kb/topology/node";
import { failUsage, median, parseSuiteOptions, printTable, writeJson } from "../report.js";
import { routeAllDmaToHbm, type TopologyCase, topologyCases } from "./cases.js";

/** One row of the table and of the JSON output. */
interface PhaseResult {
  case: string;
  source: string;
  phase: "load" | "expand" | "route cold" | "route warm";
  ms: number;
  nodes: number;
  edges: number;
  routes: number;
  heapMb: number;
}

const USAGE = `Usage: pnpm bench:topology [--case NAME] [--runs N] [--json FILE]

Times loading, expanding and routing (every pe_dma to every hbm_channel) of the design points:
${topologyCases.map((topologyCase) => `  ${topologyCase.name}`).join("\n")}

  --case NAME   run only the case whose name contains NAME
  --runs N      fresh runs per case; the table shows the median of each phase (default 1)
  --json FILE   also write the rows as a JSON array
  --help        show this help

Counts that differ from the hand counts, or a checksum that differs between runs, exit with code 1.`;

// Same relative path from perf/topology/run.ts and from the bundle dist/perf/topology.js.
const topologiesDir = fileURLToPath(new URL("../../../topologies/", import.meta.url));

function fail(message: string): never {
  return failUsage("bench:topology", message);
}

function timed<T>(action: () => T): [T, number] {
  const start = process.hrtime.bigint();
  const result = action();
  return [result, Number(process.hrtime.bigint() - start) / 1e6];
}

const heapMb = () => process.memoryUsage().heapUsed / 2 ** 20;

interface RunResult {
  source: string;
  nodes: number;
  edges: number;
  ms: Record<PhaseResult["phase"], number>;
  heapMb: Record<PhaseResult["phase"], number>;
  routes: number;
  latencySumNs: number;
}

function runCase(topologyCase: TopologyCase): RunResult {
  const file = topologyCase.file === undefined ? undefined : `${topologiesDir}${topologyCase.file}`;
  const fromFile = file !== undefined && existsSync(file);
  const [topology, loadMs] = timed(
    (): Topology => (fromFile ? loadTopologyFile(file) : resolveTopology(topologyCase.input)),
  );
  const loadHeap = heapMb();
  const [graph, expandMs] = timed(() => expandTopology(topology));
  const expandHeap = heapMb();
  const [cold, coldMs] = timed(() => routeAllDmaToHbm(graph));
  const coldHeap = heapMb();
  const [warm, warmMs] = timed(() => routeAllDmaToHbm(graph));
  if (warm.routes !== cold.routes || warm.latencySumNs !== cold.latencySumNs) {
    fail(`${topologyCase.name}: cached routes differ from the first ones`);
  }
  return {
    source: fromFile ? `topologies/${topologyCase.file}` : "generated",
    nodes: graph.nodes.length,
    edges: graph.edges.length,
    ms: { load: loadMs, expand: expandMs, "route cold": coldMs, "route warm": warmMs },
    heapMb: { load: loadHeap, expand: expandHeap, "route cold": coldHeap, "route warm": heapMb() },
    routes: cold.routes,
    latencySumNs: cold.latencySumNs,
  };
}

function main(): void {
  const parsed = parseSuiteOptions("bench:topology", USAGE, ["case"], 1);
  if (parsed === null) return;
  const { runs } = parsed;
  const options = { case: parsed.extra.case, json: parsed.json };
  const filter = options.case;
  const cases =
    filter === undefined
      ? topologyCases
      : topologyCases.filter((topologyCase) => topologyCase.name.includes(filter));
  if (cases.length === 0) {
    fail(
      `no case matches "${filter}"; the cases are ${topologyCases.map((topologyCase) => `"${topologyCase.name}"`).join(", ")}`,
    );
  }

  process.stdout.write(
    `@kb/topology speed suite: ${runs} fresh run(s) per case, median per phase (node ${process.version})\n\n`,
  );
  const results: PhaseResult[] = [];
  let problems = 0;
  for (const topologyCase of cases) {
    const runResults: RunResult[] = [];
    for (let run = 0; run < runs; run++) runResults.push(runCase(topologyCase));
    const first = runResults[0] as RunResult;
    const { nodes, edges } = first;
    const { expected } = topologyCase;
    if (nodes !== expected.nodes || edges !== expected.edges || first.routes !== expected.routes) {
      process.stderr.write(
        `bench:topology: ${topologyCase.name} (${first.source}) has ${nodes} nodes, ${edges} edges, ${first.routes} routes; the hand count is ${expected.nodes}, ${expected.edges}, ${expected.routes}\n`,
      );
      problems++;
    }
    if (runResults.some((result) => result.latencySumNs !== first.latencySumNs)) {
      process.stderr.write(`bench:topology: ${topologyCase.name}: route latencies differ between runs\n`);
      problems++;
    }
    for (const phase of ["load", "expand", "route cold", "route warm"] as const) {
      results.push({
        case: topologyCase.name,
        source: first.source,
        phase,
        ms: median(runResults.map((result) => result.ms[phase])),
        nodes,
        edges,
        routes: phase.startsWith("route") ? first.routes : 0,
        heapMb: median(runResults.map((result) => result.heapMb[phase])),
      });
    }
    const total = runResults.map((result) => result.ms.load + result.ms.expand + result.ms["route cold"]);
    process.stderr.write(
      `${topologyCase.name}: load + expand + route cold ${median(total).toFixed(0)} ms; latency checksum ${first.latencySumNs.toFixed(3)} ns\n`,
    );
  }

  const header = ["case", "source", "phase", "ms", "nodes", "edges", "routes", "heap MB"];
  const rows = results.map((result) => [
    result.case,
    result.source,
    result.phase,
    result.ms.toFixed(1),
    String(result.nodes),
    String(result.edges),
    result.routes === 0 ? "-" : String(result.routes),
    result.heapMb.toFixed(0),
  ]);
  process.stdout.write("\n");
  printTable(header, rows, 3);

  if (options.json !== undefined) {
    writeJson(options.json, results);
  }
  if (problems > 0) process.exit(1);
}

main();
