import { readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { KbError } from "@kb/errors";
import { type RunResults, RunResultsSchema } from "@kb/runtime";
import { loadTopologyGraphFile } from "@kb/topology/node";
import type { WebData, WebEdge, WebNode, WebResults, WebTimeline } from "@kb/web-ui/api";
import { findUp, locateTopology } from "./bench-files.js";
import { isRecord, timelineOfTrace, WHAT_KB_WEB_READS } from "./web-timeline.js";

// What `kb web` serves at /api/data: the results and trace files read, and the topology.

/** Options of {@link loadWebData}. */
export interface WebDataOptions {
  /** Topology YAML; default: see the `--topology` option. */
  readonly topology?: string;
  /** Where names are looked up from (default: the current directory). */
  readonly cwd?: string;
}

/**
 * Reads results and trace files (told apart by content: results have `"schema": "kb.results/1"`,
 * traces `"traceEvents"` or are an array of trace events) and the topology, into what `/api/data`
 * serves.
 *
 * Throws a `KbError` naming the file when one cannot be read, is not JSON, is neither kind or is
 * a results file that does not match `RunResultsSchema`; and the topology's errors.
 */
export function loadWebData(files: readonly string[], options: WebDataOptions = {}): WebData {
  const cwd = options.cwd ?? process.cwd();
  const inputs = files.map((file) => ({ file, input: readInput(file) }));
  const labels = labelsOf(files);
  const results: WebResults[] = [];
  const timelines: WebTimeline[] = [];
  inputs.forEach(({ file, input }, index) => {
    const label = labels[index] as string;
    if (input.kind === "results") results.push({ file, label, results: input.results });
    else timelines.push(timelineOfTrace(input.events, file, label));
  });

  const topologyFile =
    options.topology === undefined
      ? defaultTopologyFile(results, cwd)
      : locateTopology(options.topology, cwd);
  const { topology, graph } = loadTopologyGraphFile(topologyFile);
  const nodes: WebNode[] = graph.nodes.map((node) => ({
    id: node.id,
    kind: node.kind,
    impl: node.impl,
    parent: node.parent,
    sip: node.sip,
    cube: node.cube,
    pe: node.pe,
    row: node.coords?.row ?? null,
    col: node.coords?.col ?? null,
  }));
  const edges: WebEdge[] = graph.edges.map((edge) => ({
    src: edge.src,
    dst: edge.dst,
    bw: edge.bwGbs,
    latencyNs: edge.latencyNs,
  }));

  const warnings: string[] = [];
  for (const entry of results) {
    if (entry.results.topology !== topology.name) {
      warnings.push(
        `${entry.file} is a run on topology "${entry.results.topology}", the diagram shows "${topology.name}" (${topologyFile}): its utilisation is drawn only where the ids match; pass --topology with the YAML of "${entry.results.topology}".`,
      );
    }
  }
  const ids = new Set(nodes.map((node) => node.id));
  for (const timeline of timelines) {
    const unknown = timeline.tracks
      .map((track) => track.name.replace(/#\d+$/, ""))
      .filter((name) => name !== "host" && !ids.has(name));
    if (unknown.length > 0) {
      warnings.push(
        `${timeline.file}: ${unknown.length} of its ${timeline.tracks.length} tracks are not components of topology "${topology.name}" (such as ${unknown[0]}); pass --topology with the YAML it was run on.`,
      );
    }
  }
  return {
    schema: "kb.web/1",
    topology: { file: topologyFile, name: topology.name, nodes, edges },
    results,
    timelines,
    warnings,
  };
}

type Input =
  | { readonly kind: "results"; readonly results: RunResults }
  | { readonly kind: "trace"; readonly events: readonly unknown[] };

function readInput(file: string): Input {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new KbError("CLI_USAGE", `cannot read the file: ${(error as Error).message}`, {
      context: { file },
      cause: error,
    });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new KbError("CLI_USAGE", `not JSON: ${(error as Error).message}. ${WHAT_KB_WEB_READS}`, {
      context: { file },
      cause: error,
    });
  }
  if (isRecord(json) && "schema" in json) {
    if (json.schema !== "kb.results/1") {
      throw new KbError(
        "CLI_USAGE",
        `a file of schema ${JSON.stringify(json.schema)}, expected "kb.results/1". ${WHAT_KB_WEB_READS}`,
        { context: { file } },
      );
    }
    const parsed = RunResultsSchema.safeParse(json);
    if (!parsed.success) {
      const problems = parsed.error.issues
        .slice(0, 3)
        .map((issue) => `${issue.path.join(".") || "(top)"}: ${issue.message}`)
        .join("; ");
      throw new KbError(
        "CLI_USAGE",
        `not a valid results file (schema "kb.results/1"): ${problems}. Write it again with kb run --json.`,
        { context: { file } },
      );
    }
    return { kind: "results", results: parsed.data };
  }
  if (isRecord(json) && Array.isArray(json.traceEvents)) return { kind: "trace", events: json.traceEvents };
  // Chrome's other trace form: a bare array of events.
  if (Array.isArray(json) && json.every((event) => isRecord(event) && typeof event.ph === "string")) {
    return { kind: "trace", events: json };
  }
  throw new KbError("CLI_USAGE", `neither a results file nor a trace. ${WHAT_KB_WEB_READS}`, {
    context: { file },
  });
}

/** Base names, or the paths as given where two files share a base name. */
function labelsOf(files: readonly string[]): string[] {
  const names = files.map((file) => basename(file));
  return names.map((name, index) =>
    names.indexOf(name) === names.lastIndexOf(name) ? name : (files[index] as string),
  );
}

/** `topologies/NAME.yaml` of the first results' topology NAME when it exists, else `topologies/default.yaml`. */
function defaultTopologyFile(results: readonly WebResults[], cwd: string): string {
  const name = results[0]?.results.topology;
  if (name !== undefined && /^[\w.-]+$/.test(name)) {
    const named = findUp(join("topologies", `${name}.yaml`), cwd);
    if (named !== undefined) return named;
  }
  return findUp(join("topologies", "default.yaml"), cwd) ?? "topologies/default.yaml";
}
