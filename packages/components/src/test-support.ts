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

/**
 * One cube whose NOC is a `rows` x `cols` mesh of BookSim 2's reference network (16 B flits at
 * 1 GHz): every channel (router to router, PE_DMA to router and back) 16 GB/s with 1 ns of
 * latency, routers `first_flit_ns: 4`, the XBAR too slow to be a shortcut; `noc` adds to
 * `cube.noc` (an impl, its params, the routing).
 */
export function bookSimMesh(rows: number, cols: number, noc: Record<string, unknown> = {}): TopologyGraph {
  const link = { bw_gbs: 16, latency_ns: 1 };
  return graphFrom({
    name: "mesh",
    system: { sips: 1 },
    sip: { cubes: 1 },
    cube: {
      noc: { rows, cols, link, first_flit_ns: 4, ...noc },
      xbar: { first_flit_ns: 100_000 },
      links: { pe_to_noc: link },
    },
  });
}
