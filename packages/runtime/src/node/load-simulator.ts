import { defaultRegistry } from "@kb/builtins";
import type { KbPlugin } from "@kb/components";
import { buildMachineFromFile, loadPlugins } from "@kb/components/node";
import { KbError } from "@kb/errors";
import { SpillFile } from "@kb/oplog/node";
import type { TopologyGraph, TopologyInput } from "@kb/topology";
import { Simulator } from "../simulator.js";
import type { SimulatorOptions } from "../simulator-options.js";
import { machineTracer } from "../sites.js";
import { PLUGIN_SHARED_MODULES } from "./plugin-modules.js";

// loadSimulator of `@kb/runtime/node`: a simulator from a topology file, plug-ins by name.

/** Options of {@link loadSimulator}: those of `Simulator.fromTopology`, with plug-ins by name. */
export interface LoadSimulatorOptions extends Omit<SimulatorOptions, "plugins"> {
  /**
   * Plug-ins: loaded `KbPlugin` objects, or package names and files (imported from the working
   * directory, see `loadPlugins` of `@kb/components/node`). A topology file's own `plugins:` are
   * always loaded; with a file, every plug-in must be a name (objects are refused).
   */
  readonly plugins?: readonly (KbPlugin | string)[];
}

/**
 * Builds the machine of a topology on Node: a YAML file path (its `plugins:` loaded, errors
 * located as `file:line:col`), a topology object or an expanded graph. Host writes past
 * `hostWriteMemoryBytes` go to a temporary `SpillFile` unless `options.hostWriteFile` says
 * otherwise. `Simulator.fromTopology` is the same without files and names, for any platform.
 *
 * ```ts
 * import { loadSimulator } from "@kb/runtime/node";
 * const sim = await loadSimulator("topologies/default.yaml", { plugins: ["kb-plugin-systolic-gemm"] });
 * ```
 *
 * Throws `RUNTIME_INVALID` for plug-in objects with a topology file, what `buildMachineFromFile`
 * and `loadPlugins` of `@kb/components/node` throw, and the topology's validation errors.
 */
export async function loadSimulator(
  topology: string | TopologyInput | TopologyGraph,
  options: LoadSimulatorOptions = {},
): Promise<Simulator> {
  const loaded = (options.plugins ?? []).filter((plugin): plugin is KbPlugin => typeof plugin !== "string");
  const named = (options.plugins ?? []).filter((plugin): plugin is string => typeof plugin === "string");
  const simulatorOptions: SimulatorOptions = {
    ...options,
    plugins: loaded,
    hostWriteFile:
      options.hostWriteFile ?? (() => new SpillFile({ what: "the host writes phase 2 replays" })),
  };
  if (typeof topology === "string") {
    if (loaded.length > 0) {
      throw new KbError(
        "RUNTIME_INVALID",
        "plug-in objects cannot be combined with a topology file; pass package names (the file's plugins: are loaded too).",
      );
    }
    const { machine, topology: resolved } = await buildMachineFromFile(topology, {
      registryFor: defaultRegistry,
      shared: PLUGIN_SHARED_MODULES,
      plugins: named,
      opLogger: options.opLogger ?? null,
      tracer: machineTracer(options),
    });
    return new Simulator(machine, resolved.name, simulatorOptions);
  }
  if (named.length > 0)
    loaded.push(...(await loadPlugins(named, { from: process.cwd(), shared: PLUGIN_SHARED_MODULES })));
  return Simulator.fromTopology(topology, simulatorOptions);
}
