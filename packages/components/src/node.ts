import type { OpLogger } from "@kb/oplog";
import type { Topology, TopologyGraph } from "@kb/topology";
import type { KbPlugin } from "./define.js";
import { buildMachine, type Machine } from "./machine.js";
import { type CheckTopologyComponentsOptions, checkTopologyComponents } from "./node/check-topology.js";
import type { Tracer } from "./trace.js";

export type { CheckTopologyComponentsOptions, TopologyComponents } from "./node/check-topology.js";
export { checkTopologyComponents } from "./node/check-topology.js";
export type {
  ImportSourceOptions,
  LoadPluginsOptions,
  SharedModules,
  SourceTransform,
} from "./node/plugin-loader.js";
export {
  importSourceFile,
  isPluginPath,
  loadPlugins,
  loadTopologyPlugins,
  pluginCodeSource,
} from "./node/plugin-loader.js";

// ---------------------------------------------------------------------------------------------
// Checking a topology's components, building a machine from a file

/** Options of {@link buildMachineFromFile}. */
export interface BuildMachineFromFileOptions extends CheckTopologyComponentsOptions {
  /** Op logger; hooks run only when one is given. */
  readonly opLogger?: OpLogger | null;
  /** Tracer; events are recorded only when one is given. */
  readonly tracer?: Tracer | null;
}

/** What {@link buildMachineFromFile} returns. */
export interface MachineFromFile {
  /** The validated topology (defaults filled in). */
  readonly topology: Topology;
  /** Its expanded graph. */
  readonly graph: TopologyGraph;
  /** The plug-ins loaded (the topology's `plugins:`, then `options.plugins`). */
  readonly plugins: readonly KbPlugin[];
  /** The machine, ready to submit commands to and run. */
  readonly machine: Machine;
}

/**
 * Loads a topology file, imports its plug-ins (its `plugins:` plus `options.plugins`, see
 * {@link loadTopologyPlugins}) and builds the machine. Checks first with
 * {@link checkTopologyComponents}: an unknown impl, a rejected param or a plug-in that cannot be
 * loaded is reported at its place in the file (`file:line:col: path: message`).
 *
 * Throws what {@link checkTopologyComponents} throws.
 */
export async function buildMachineFromFile(
  path: string,
  options: BuildMachineFromFileOptions,
): Promise<MachineFromFile> {
  const { topology, graph, plugins, registry } = await checkTopologyComponents(path, {
    registryFor: (options as Partial<BuildMachineFromFileOptions> | undefined)?.registryFor as never,
    ...(options?.plugins === undefined ? {} : { plugins: options.plugins }),
    ...(options?.shared === undefined ? {} : { shared: options.shared }),
  });
  const machine = buildMachine(graph, {
    registry,
    opLogger: options.opLogger ?? null,
    tracer: options.tracer ?? null,
  });
  return { topology, graph, plugins, machine };
}
