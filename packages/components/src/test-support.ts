import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { expandTopology, parseTopology, resolveTopology, type TopologyGraph } from "@kb/topology";
import { buildMachine, type Machine, type MachineOptions } from "./machine.js";

/** Path of a topology under the repository's `topologies/`. */
export function topologyPath(name: string): string {
  return fileURLToPath(new URL(`../../../topologies/${name}.yaml`, import.meta.url));
}

/** The graph of `topologies/<name>.yaml`. */
export function graphOf(name: string): TopologyGraph {
  const path = topologyPath(name);
  return expandTopology(parseTopology(readFileSync(path, "utf8"), path));
}

/** The graph of a topology object (defaults filled in). */
export function graphFrom(input: Record<string, unknown>): TopologyGraph {
  return expandTopology(resolveTopology({ name: "test", ...input }));
}

/** A machine of `topologies/<name>.yaml` or of a topology object. */
export function machineOf(topology: string | Record<string, unknown>, options: MachineOptions = {}): Machine {
  return buildMachine(typeof topology === "string" ? graphOf(topology) : graphFrom(topology), options);
}
