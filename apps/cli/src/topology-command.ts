import { defaultRegistry } from "@kb/builtins";
import { hbmStackPeaks } from "@kb/components";
import { buildMachineFromFile, checkTopologyComponents } from "@kb/components/node";
import { isKbError } from "@kb/errors";
import { PLUGIN_SHARED_MODULES } from "@kb/runtime/node";
import {
  formatIssue,
  type LocatedIssue,
  type Topology,
  type TopologyGraph,
  topologyToYaml,
} from "@kb/topology";
import { loadTopologyFile, loadTopologyGraphFile } from "@kb/topology/node";
import { type Command, Option } from "commander";
import { locateTopology } from "./bench-files.js";
import {
  drawGraph,
  GRAPH_FORMATS,
  GRAPH_LEVELS,
  type GraphFormat,
  type GraphLevel,
  toDot,
  toMermaid,
} from "./format-graph.js";
import { formatCounts, formatTopology, specCounts, type TopologyCounts } from "./format-topology.js";
import { formatWarning, locatedIssuesOf } from "./located-issues.js";
import type { CliIo, RunState } from "./run-cli.js";

/** Adds `kb topology validate | show | graph` to the program. */
export function addTopologyCommand(program: Command, io: CliIo, state: RunState): Command {
  // Created through `program.command` so it inherits the output and help settings.
  const topology = program
    .command("topology")
    .summary("check, inspect and draw topology YAML files")
    .description("Check, inspect and draw topology YAML files (SIPs -> cubes -> PEs, HBM, links).");

  topology
    .command("validate")
    .summary("check topology files, their plug-ins, impls and params, and print their counts")
    .description(
      "Check topology files: the YAML, the expanded graph, and what a machine is built from: the " +
        "plug-ins (the file's plugins: plus --plugin) load, every node's impl is registered and its " +
        "params pass the impl's schema (no machine is built). Prints `OK FILE: NAME: counts` for " +
        "each valid file, and every problem of an invalid one at its place, as " +
        "`file:line:col: path: message`, on stderr. The topology's structural limits (SIPs, cubes " +
        "and PEs within the device address, HBM and SRAM sizes, TCM vs the scheduler's reserved " +
        "TCM) are checked too, as `kb run` does. Valid but suspicious choices are printed as " +
        "`warning: file:line:col: path: message` lines and do not fail. Exits with 1 if any file fails.",
    )
    .argument(
      "<topology...>",
      "topology names (ref-cube) or YAML files, found as kb run --topology finds them",
    )
    .option(
      "--plugin <package-or-path...>",
      "also load these plug-ins: npm package names, or paths (./my-hbm.ts, ../kb-plugin-x) from the current directory",
    )
    .addHelpText(
      "after",
      "\nExamples:\n" +
        "  kb topology validate topologies/*.yaml\n" +
        "  kb topology validate my-design.yaml --plugin ./my-hbm.ts",
    )
    .action(async (files: string[], options: { plugin?: string[] }) => {
      for (const file of files) {
        let counts: TopologyCounts;
        let name: string;
        let warnings: readonly LocatedIssue[];
        try {
          const checked = await checkTopologyComponents(locateTopology(file, process.cwd()), {
            registryFor: defaultRegistry,
            shared: PLUGIN_SHARED_MODULES,
            plugins: options.plugin ?? [],
          });
          name = checked.topology.name;
          counts = graphCounts(checked.topology, checked.graph);
          warnings = checked.warnings;
        } catch (error) {
          const issues = locatedIssuesOf(error);
          if (issues !== undefined) {
            io.stderr.write(`${issues.map(formatIssue).join("\n")}\n`);
          } else if (isKbError(error)) {
            io.stderr.write(`${error.message}\n`);
          } else {
            throw error;
          }
          state.exitCode = 1;
          continue;
        }
        io.stdout.write(`OK ${file}: ${name}: ${formatCounts(counts)}\n`);
        for (const warning of warnings) io.stderr.write(`${formatWarning(warning)}\n`);
      }
    });

  topology
    .command("show")
    .summary("print a topology: tree, links, counts, peak bandwidths")
    .description(
      "Print a topology: the tree SIP -> cube -> PE grid, what every cube and PE is made of, the " +
        "links, the counts and the peak bandwidths (GB/s).",
    )
    .argument("<topology>", "a topology name (ref-cube) or YAML file, found as kb run --topology finds it")
    .option("--resolved", "print the fully resolved YAML instead (every default written out)")
    .option("--json", "print the resolved topology as JSON instead")
    .action(async (name: string, options: { resolved?: boolean; json?: boolean }) => {
      const file = locateTopology(name, process.cwd());
      if (options.json === true) io.stdout.write(`${JSON.stringify(loadTopologyFile(file), null, 2)}\n`);
      else if (options.resolved === true) io.stdout.write(topologyToYaml(loadTopologyFile(file)));
      else {
        // The machine is built so the HBM peaks are its models' own peak() (as kb probe and kb run).
        const {
          topology: loaded,
          graph,
          machine,
        } = await buildMachineFromFile(file, { registryFor: defaultRegistry, shared: PLUGIN_SHARED_MODULES });
        io.stdout.write(formatTopology(loaded, graphCounts(loaded, graph), hbmStackPeaks(machine)));
      }
    });

  topology
    .command("graph")
    .summary("draw the expanded graph as Graphviz dot or a Mermaid flowchart")
    .description(
      "Draw the expanded topology graph as Graphviz dot or a Mermaid flowchart: SIPs and cubes as " +
        "clusters, one edge per linked pair labelled with its bandwidth. The same file always " +
        "draws the same text.",
    )
    .argument("<topology>", "a topology name (ref-cube) or YAML file, found as kb run --topology finds it")
    .addOption(
      new Option("--format <format>", "output format").choices([...GRAPH_FORMATS]).makeOptionMandatory(),
    )
    .addOption(
      new Option(
        "--level <level>",
        "detail: cube = one node per PE and per HBM stack; pe = PE components and HBM channels; all = every node",
      )
        .choices([...GRAPH_LEVELS])
        .default("cube"),
    )
    .action((name: string, options: { format: GraphFormat; level: GraphLevel }) => {
      const drawn = drawGraph(
        loadTopologyGraphFile(locateTopology(name, process.cwd())).graph,
        options.level,
      );
      io.stdout.write(options.format === "dot" ? toDot(drawn) : toMermaid(drawn));
    });

  return topology;
}

/**
 * SIPs, cubes and PEs from the spec; nodes and links from the graph, a link being a pair of nodes
 * joined by at least one edge (a bidirectional link is two edges but one link).
 */
function graphCounts(topology: Topology, graph: TopologyGraph): TopologyCounts {
  const pairs = new Set<string>();
  for (const edge of graph.edges) {
    pairs.add(edge.src < edge.dst ? `${edge.src} ${edge.dst}` : `${edge.dst} ${edge.src}`);
  }
  return { ...specCounts(topology), nodes: graph.nodes.length, links: pairs.size };
}
