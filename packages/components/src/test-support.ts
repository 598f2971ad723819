import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { defaultRegistry } from "@kb/builtins";
import { MemorySink, OpLogger } from "@kb/oplog";
import type { PeCommand } from "@kb/spec";
import { expandTopology, parseTopology, resolveTopology, type TopologyGraph } from "@kb/topology";
import type { KbPlugin } from "./define.js";
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

/** Options of {@link machineOf}: the registry defaults to the built-ins plus `plugins`. */
export type TestMachineOptions = Omit<MachineOptions, "registry"> & {
  readonly registry?: MachineOptions["registry"];
  readonly plugins?: readonly KbPlugin[];
};

/** A machine of `topologies/<name>.yaml` or of a topology object, on the built-ins plus `plugins`. */
export function machineOf(
  topology: string | Record<string, unknown>,
  options: TestMachineOptions = {},
): Machine {
  const { plugins = [], registry = defaultRegistry(plugins), ...rest } = options;
  return buildMachine(typeof topology === "string" ? graphOf(topology) : graphFrom(topology), {
    ...rest,
    registry,
  });
}

/**
 * Runs one PE command alone on PE 0 of `topology` (default.yaml by default), with a validating
 * op logger: the simulated time it took, the bytes its PE_DMA moved, and the op records.
 */
export function runAlone(command: PeCommand, topology: string | Record<string, unknown> = "default") {
  const sink = new MemorySink();
  const logger = new OpLogger(sink, { validate: true });
  const machine = machineOf(topology, { opLogger: logger });
  machine.run(machine.submit("sip0.cube0.pe0", [command]));
  logger.close();
  const dma = machine.stats().components.find((c) => c.id === "sip0.cube0.pe0.pe_dma");
  return { ns: machine.env.now, bytes: dma?.bytes, records: sink.records };
}
