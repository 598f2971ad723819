import { readUserText } from "@kb/errors/node";
import { expandTopology } from "./expand.js";
import type { TopologyGraph } from "./graph.js";
import { parseTopology } from "./load.js";
import { overrideIssue } from "./override-issue.js";
import type { Topology } from "./schema.js";
import { topologyWarnings } from "./topology-warnings.js";
import { type LocatedIssue, YamlValidationError, yamlLocator } from "./yaml-validate.js";

/**
 * Reads and validates a topology file (Node only: the rest of the package runs anywhere).
 * Throws `TOPOLOGY_NOT_FOUND` if the file cannot be read, and the errors of `parseTopology`.
 */
export function loadTopologyFile(path: string): Topology {
  return parseTopology(readTopologyText(path), path);
}

/** What {@link loadTopologyGraphFile} returns. */
export interface TopologyGraphFile {
  /** The validated topology (defaults filled in). */
  readonly topology: Topology;
  /** Its expanded graph. */
  readonly graph: TopologyGraph;
  /** Valid but suspicious choices (see `topologyWarnings`), located like errors. */
  readonly warnings: readonly LocatedIssue[];
}

/**
 * Reads, validates and expands a topology file. The structural limits (`topologyLimitIssues`)
 * are part of validation, so a topology too big for the device address or for memory fails
 * before anything is expanded. Problems found during expansion that belong to a place in the
 * file (an override that matches no node, or sets an HBM geometry key) are reported like
 * validation errors, as `file:line:col: overrides[i].match: message` (a `YamlValidationError`,
 * see `overrideIssue`). Warnings (`topologyWarnings`) come back located, as
 * `file:line:col: path: message`.
 */
export function loadTopologyGraphFile(path: string): TopologyGraphFile {
  const text = readTopologyText(path);
  const topology = parseTopology(text, path);
  try {
    const graph = expandTopology(topology);
    return { topology, graph, warnings: locatedWarnings(topology, text, path) };
  } catch (error) {
    const issue = overrideIssue(error, text, path);
    if (issue === undefined) throw error;
    throw new YamlValidationError("TOPOLOGY_INVALID", path, [issue]);
  }
}

/**
 * The warnings of a topology file (what {@link loadTopologyGraphFile} gives, the lines
 * `kb topology validate` prints), without expanding it: `kb run` prints them before a run.
 * Throws what {@link loadTopologyFile} throws.
 */
export function topologyFileWarnings(path: string): readonly LocatedIssue[] {
  const text = readTopologyText(path);
  return locatedWarnings(parseTopology(text, path), text, path);
}

function locatedWarnings(topology: Topology, text: string, file: string): LocatedIssue[] {
  const locate = yamlLocator(text);
  const written = (path: readonly (string | number)[]) => locate(path).found === path.length;
  return topologyWarnings(topology, written).map(({ path, message }) => {
    const { line, col } = locate(path);
    return { file, line, col, path: path.join("."), message };
  });
}

/**
 * The largest topology file read: 4 MiB. The reference topologies are 1-4 KB; a heterogeneous
 * design with an override per PE of a 64-cube SIP stays well under 1 MiB.
 */
export const TOPOLOGY_FILE_MAX_BYTES = 4 * 2 ** 20;

/**
 * The text of a topology file: `TOPOLOGY_NOT_FOUND` when it cannot be read, is not a regular file
 * (a FIFO, a device, a directory) or is above {@link TOPOLOGY_FILE_MAX_BYTES}.
 */
export function readTopologyText(path: string): string {
  return readUserText(path, {
    what: "topology file",
    maxBytes: TOPOLOGY_FILE_MAX_BYTES,
    code: "TOPOLOGY_NOT_FOUND",
  });
}
