import { defaultRegistry } from "@kb/builtins";
import type { KbPlugin } from "@kb/components";
import { loadPlugins, loadTopologyPlugins } from "@kb/components/node";
import { PLUGIN_SHARED_MODULES } from "@kb/runtime/node";
import { loadTopologyFile } from "@kb/topology/node";
import type { Command } from "commander";
import { describeImpls, formatImpls } from "./format-components.js";
import type { CliIo } from "./run-cli.js";

/** Adds `kb components list` to the program. */
export function addComponentsCommand(program: Command, io: CliIo): Command {
  const components = program
    .command("components")
    .summary("list the component impls a topology can use")
    .description(
      "List the component implementations (timing models) a topology can use: the built-ins and " +
        "those of plug-in packages.",
    );

  components
    .command("list")
    .summary("every kind and impl with its description and params")
    .description(
      "Print every registered component kind and impl (built-ins, plus the plug-ins named by the " +
        "topology's plugins: and by --plugin) with its description and each param's type, default " +
        "and meaning. Plug-ins are resolved from the topology file's directory, then the current " +
        "directory.",
    )
    .option("--topology <file>", "also load the plug-ins this topology lists in plugins:")
    .option(
      "--plugin <package...>",
      "also load these plug-ins: npm package names, or paths (./my-hbm, ./my-hbm.ts, a package directory) from the current directory",
    )
    .option("--json", "print a JSON array of { kind, impl, source, description, params, counters? } instead")
    .action(async (options: { topology?: string; plugin?: string[]; json?: boolean }) => {
      const extra = options.plugin ?? [];
      let plugins: KbPlugin[];
      if (options.topology !== undefined) {
        plugins = await loadTopologyPlugins(
          options.topology,
          loadTopologyFile(options.topology),
          extra,
          PLUGIN_SHARED_MODULES,
        );
      } else {
        plugins = await loadPlugins(extra, { from: process.cwd(), shared: PLUGIN_SHARED_MODULES });
      }
      const impls = describeImpls(defaultRegistry(plugins));
      if (options.json === true) io.stdout.write(`${JSON.stringify(impls, null, 2)}\n`);
      else {
        // Like the help text: the terminal's width (at most 120), 80 on a pipe.
        const width = io.stdout.isTTY === true && io.stdout.columns !== undefined ? io.stdout.columns : 80;
        io.stdout.write(formatImpls(impls, Math.min(width, 120)));
      }
    });

  return components;
}
