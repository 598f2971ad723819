import { readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { gunzipSync } from "node:zlib";
import { KbError } from "@kb/errors";
import { type RunResults, RunResultsSchema } from "@kb/runtime";
import { loadTopologyGraphFile } from "@kb/topology/node";
import type { WebData, WebEdge, WebNode, WebResults, WebTimeline } from "@kb/web-ui/api";
import { findUp, locateTopology } from "./bench-files.js";
import type { SliceIndex } from "./web-slice-index.js";
import {
  isRecord,
  TimelineBuilder,
  type TraceTimeline,
  timelineOfTrace,
  WHAT_KB_WEB_READS,
} from "./web-timeline.js";

// What `kb web` serves at /api/data: the results and trace files read, and the topology.

/** Options of {@link loadWebData}. */
export interface WebDataOptions {
  /** Topology YAML; default: see the `--topology` option. */
  readonly topology?: string;
  /** Where names are looked up from (default: the current directory). */
  readonly cwd?: string;
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
 * Throws a `KbError` naming the file when one cannot be read, is not JSON, is neither kind or is
 * a results file that does not match `RunResultsSchema`; and the topology's errors.
 */
export function loadWebData(files: readonly string[], options: WebDataOptions = {}): LoadedWebData {
  const cwd = options.cwd ?? process.cwd();
  const labels = labelsOf(files);
  const results: WebResults[] = [];
  const traces: TraceTimeline[] = [];
  files.forEach((file, index) => {
    const label = labels[index] as string;
    const input = readInput(file, label);
    if (input.kind === "results") results.push({ file, label, results: input.results });
    else traces.push(input.trace);
  });
  const timelines: WebTimeline[] = traces.map((trace) => trace.timeline);

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
      topology: { file: topologyFile, name: topology.name, nodes, edges },
      results,
      timelines,
      warnings,
    },
    slices: traces.map((trace) => trace.slices),
  };
}

type Input =
  | { readonly kind: "results"; readonly results: RunResults }
  | { readonly kind: "trace"; readonly trace: TraceTimeline };

function readInput(file: string, label: string): Input {
  const bytes = readBytes(file);
  const lines = kbTraceLines(bytes, file, label);
  if (lines !== null) return { kind: "trace", trace: lines };
  const text = bytes.toString("utf8");
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
  if (isRecord(json) && Array.isArray(json.traceEvents)) {
    return { kind: "trace", trace: timelineOfTrace(json.traceEvents, file, label) };
  }
  // Chrome's other trace form: a bare array of events.
  if (Array.isArray(json) && json.every((event) => isRecord(event) && typeof event.ph === "string")) {
    return { kind: "trace", trace: timelineOfTrace(json, file, label) };
  }
  throw new KbError("CLI_USAGE", `neither a results file nor a trace. ${WHAT_KB_WEB_READS}`, {
    context: { file },
  });
}

/** The file's bytes, gunzipped when it starts with gzip's magic bytes 0x1f 0x8b (`kb run --trace out.json.gz`). */
function readBytes(file: string): Buffer {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (error) {
    throw new KbError("CLI_USAGE", `cannot read the file: ${(error as Error).message}`, {
      context: { file },
      cause: error,
    });
  }
  if (bytes[0] !== 0x1f || bytes[1] !== 0x8b) return bytes;
  try {
    return gunzipSync(bytes);
  } catch (error) {
    throw new KbError(
      "CLI_USAGE",
      `a gzip file that does not decompress (${(error as Error).message}): truncated or damaged? Write it again with kb run --trace.`,
      { context: { file }, cause: error },
    );
  }
}

const KB_TRACE_HEADER = '{"traceEvents":[\n';
/** Bytes decoded at once when reading a trace line by line. */
const LINE_CHUNK_BYTES = 8 << 20;

/**
 * A trace as `kb run --trace` writes it (`{"traceEvents":[`, one event per line, then a line
 * `],...}`), read line by line: no string of the whole file, no array of all its events. Null when
 * the bytes are not in that form (any other JSON is parsed whole).
 */
function kbTraceLines(bytes: Buffer, file: string, label: string): TraceTimeline | null {
  if (bytes.toString("utf8", 0, KB_TRACE_HEADER.length) !== KB_TRACE_HEADER) return null;
  const builder = new TimelineBuilder(file);
  let index = 0;
  let footer: string | null = null;
  let at = KB_TRACE_HEADER.length;
  while (at < bytes.length) {
    let stop = Math.min(bytes.length, at + LINE_CHUNK_BYTES);
    if (stop < bytes.length) {
      const newline = bytes.indexOf(10, stop);
      stop = newline < 0 ? bytes.length : newline + 1;
    }
    const text = bytes.toString("utf8", at, stop);
    at = stop;
    for (const raw of text.split("\n")) {
      const line = raw.trim();
      if (line === "") continue;
      if (footer !== null) return null;
      if (line.startsWith("]")) {
        footer = line;
        continue;
      }
      let event: unknown;
      try {
        event = JSON.parse(line.endsWith(",") ? line.slice(0, -1) : line);
      } catch {
        return null;
      }
      builder.add(event, index++);
    }
  }
  if (footer === null) return null;
  try {
    JSON.parse(`{"traceEvents":[${footer}`);
  } catch {
    return null;
  }
  return builder.finish(label);
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
