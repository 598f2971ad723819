import { readFileSync } from "node:fs";
import { KbError } from "@kb/errors";
import { parseTopology } from "./load.js";
import type { Topology } from "./schema.js";

/**
 * Reads and validates a topology file (Node only: the rest of the package runs anywhere).
 * Throws `TOPOLOGY_NOT_FOUND` if the file cannot be read, and the errors of `parseTopology`.
 */
export function loadTopologyFile(path: string): Topology {
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
  return parseTopology(text, path);
}
