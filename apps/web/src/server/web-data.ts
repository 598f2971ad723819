import { basename, join } from "node:path";
import { loadTopologyGraphFile } from "@kb/topology/node";
import type { WebData, WebResults, WebTimeline } from "../api.js";
import type { SliceIndex } from "../slice-index.js";
import { webTopologyOf } from "../topology-data.js";
import type { TraceTimeline } from "../trace-timeline.js";
import { DEFAULT_MAX_INPUT_BYTES } from "./web-file.js";
import { readWebInput } from "./web-input.js";
import { readKernelSources } from "./web-sources.js";

// What `kb web` serves at /api/data: the results and trace files read, and the topology.

/**
 * How topology files are found by name: the CLI's lookup (`kb run --topology`'s: the current
 * folder and its parents, then the topologies kb ships), which it passes in.
 */
export interface TopologyLookup {
  /**
   * The file of a `--topology` argument: a path, a file name or a topology name. Throws a
   * `KbError` naming where it looked when there is none.
   */
  locate(topologyArg: string, cwd: string): string;
  /** The first `<dir>/<relative>` that is a file over the folders `locate` searches, if any. */
  find(relative: string, cwd: string): string | undefined;
}

/** Options of {@link loadWebData}. */
export interface WebDataOptions {
  /** How topology names become files (the CLI passes its own lookup). */
  readonly topologies: TopologyLookup;
  /** Topology YAML; default: see the `--topology` option. */
  readonly topology?: string;
  /** Where names are looked up from (default: the current directory). */
  readonly cwd?: string;
  /** The most read of each file, on disk and decompressed (default {@link DEFAULT_MAX_INPUT_BYTES}). */
  readonly maxInputBytes?: number;
}

/** What `kb web` serves: `/api/data`, and the slices of each timeline for `/api/timeline`. */
export interface LoadedWebData {
  readonly data: WebData;
  /** The slices of `data.timelines[i]`, at `i`. */
  readonly slices: readonly SliceIndex[];
}

/**
 * Reads results and trace files (told apart by content: results have `"schema": "kb.results/1"`,
 * traces `"traceEvents"` or are an array of trace events; either may be gzip-compressed) and the
 * topology, into what `/api/data` and `/api/timeline` serve.
 *
 * Throws a `KbError` naming the file when one cannot be read (not a regular file, larger than
 * `maxInputBytes`), is not JSON, is neither kind or is a results file that does not match
 * `RunResultsSchema`; and the topology's errors.
 */
export async function loadWebData(files: readonly string[], options: WebDataOptions): Promise<LoadedWebData> {
  const cwd = options.cwd ?? process.cwd();
  const labels = labelsOf(files);
  const results: WebResults[] = [];
  const traces: TraceTimeline[] = [];
  for (const [index, file] of files.entries()) {
    const label = labels[index] as string;
    const input = await readWebInput(file, label, options.maxInputBytes ?? DEFAULT_MAX_INPUT_BYTES);
    if (input.kind === "results") results.push({ file, label, results: input.results });
    else traces.push(input.trace);
  }
  const timelines: WebTimeline[] = traces.map((trace) => trace.timeline);

  const topologyFile =
    options.topology === undefined
      ? defaultTopologyFile(results, cwd, options.topologies)
      : options.topologies.locate(options.topology, cwd);
  const { topology, graph } = loadTopologyGraphFile(topologyFile);
  const webTopology = webTopologyOf(topologyFile, topology.name, graph);
  const { nodes } = webTopology;

  const warnings: string[] = [];
  for (const entry of results) {
    if (entry.results.topology !== topology.name) {
      warnings.push(
        `${entry.file} ran on topology "${entry.results.topology}", the diagram draws "${topology.name}" (${topologyFile}): kb web compares the figures of runs on different topologies side by side (launches matched by position) and colours the diagram only where the ids match; to see "${entry.results.topology}" drawn, run kb web ${entry.file} --topology with the YAML of "${entry.results.topology}".`,
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
    data: {
      schema: "kb.web/1",
      topology: webTopology,
      results,
      timelines,
      warnings,
      sources: readKernelSources(results, cwd),
    },
    slices: traces.map((trace) => trace.slices),
  };
}

/** Base names, or the paths as given where two files share a base name. */
function labelsOf(files: readonly string[]): string[] {
  const names = files.map((file) => basename(file));
  return names.map((name, index) =>
    names.indexOf(name) === names.lastIndexOf(name) ? name : (files[index] as string),
  );
}

/** `topologies/NAME.yaml` of the first results' topology NAME when it exists, else `topologies/default.yaml`. */
function defaultTopologyFile(
  results: readonly WebResults[],
  cwd: string,
  topologies: TopologyLookup,
): string {
  const name = results[0]?.results.topology;
  if (name !== undefined && /^[\w.-]+$/.test(name)) {
    const named = topologies.find(join("topologies", `${name}.yaml`), cwd);
    if (named !== undefined) return named;
  }
  return topologies.find(join("topologies", "default.yaml"), cwd) ?? "topologies/default.yaml";
}
