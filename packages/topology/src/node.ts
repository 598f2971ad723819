import { readFileSync } from "node:fs";
import { isKbError, KbError } from "@kb/errors";
import { expandTopology } from "./expand.js";
import type { TopologyGraph } from "./graph.js";
import { parseTopology } from "./load.js";
import type { Topology } from "./schema.js";
import { locateYamlPath, YamlValidationError } from "./yaml-validate.js";

/**
 * Reads and validates a topology file (Node only: the rest of the package runs anywhere).
 * Throws `TOPOLOGY_NOT_FOUND` if the file cannot be read, and the errors of `parseTopology`.
 */
export function loadTopologyFile(path: string): Topology {
  return parseTopology(readTopologyText(path), path);
}

/**
 * Reads, validates and expands a topology file. Problems found during expansion that belong to a
 * place in the file (an override that matches no node) are reported like validation errors, as
 * `file:line:col: overrides[i].match: message` (a `YamlValidationError`).
 */
export function loadTopologyGraphFile(path: string): { topology: Topology; graph: TopologyGraph } {
  const text = readTopologyText(path);
  const topology = parseTopology(text, path);
  try {
    return { topology, graph: expandTopology(topology) };
  } catch (error) {
    const match = isKbError(error, "TOPOLOGY_INVALID")
      ? /^overrides\[(\d+)\]\.match: (.*)$/s.exec(error.detail)
      : null;
    if (match === null) throw error;
    const index = Number(match[1]);
    const position = locateYamlPath(text, ["overrides", index, "match"]);
    throw new YamlValidationError("TOPOLOGY_INVALID", path, [
      {
        file: path,
        line: position.line,
        col: position.col,
        path: `overrides[${index}].match`,
        message: match[2] as string,
      },
    ]);
  }
}

function readTopologyText(path: string): string {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new KbError(
      "TOPOLOGY_NOT_FOUND",
      `cannot read topology file ${path}: ${(error as Error).message}`,
      {
        context: { file: path },
        cause: error,
      },
    );
  }
  return text;
}
