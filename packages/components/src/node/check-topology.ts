import { closest, formatIssuePath, isKbError, KbError, schemaIssueText } from "@kb/errors";
import {
  describeSchemaIssue,
  idGlobToRegExp,
  isIdGlob,
  type LocatedIssue,
  type Topology,
  type TopologyGraph,
  type TopologyNode,
  type YamlPlace,
  YamlValidationError,
  yamlLocator,
} from "@kb/topology";
import { loadTopologyGraphFile, readTopologyText } from "@kb/topology/node";
import type * as z from "zod";
import type { KbPlugin } from "../define.js";
import { peTcmBudget, peTcmBudgetProblems } from "../pe-tcm-budget.js";
import type { ComponentRegistry } from "../registry.js";
import { loadTopologyPlugins, type SharedModules } from "./plugin-loader.js";

/** Options of {@link checkTopologyComponents}. */
export interface CheckTopologyComponentsOptions {
  /**
   * Builds the registry the nodes' impls resolve in from the plug-ins loaded (the topology's
   * `plugins:`, then `plugins`): the framework knows no impl of its own. Pass `defaultRegistry` of
   * `@kb/builtins` (the built-in models plus those plug-ins).
   */
  readonly registryFor: (plugins: readonly KbPlugin[]) => ComponentRegistry;
  /**
   * Plug-ins besides the topology's `plugins:` (the CLI's `--plugin`): npm package names, or paths
   * resolved from the current directory.
   */
  readonly plugins?: readonly string[];
  /** Modules a plug-in file gets by package name besides `@kb/components` and `zod` (see `loadPlugins`). */
  readonly shared?: SharedModules;
}

/** What {@link checkTopologyComponents} returns: everything a machine is built from. */
export interface TopologyComponents {
  /** The validated topology (defaults filled in). */
  readonly topology: Topology;
  /** Its expanded graph. */
  readonly graph: TopologyGraph;
  /** The plug-ins loaded: the topology's `plugins:`, then `options.plugins`. */
  readonly plugins: readonly KbPlugin[];
  /** `registryFor(plugins)`; every node's impl resolves in it. */
  readonly registry: ComponentRegistry;
  /** Valid but suspicious choices (see `topologyWarnings` of `@kb/topology`), located. */
  readonly warnings: readonly LocatedIssue[];
}

/**
 * Checks everything about a topology file a machine needs, without building one: loads and
 * validates the YAML, expands the graph, imports the plug-ins (its `plugins:` plus
 * `options.plugins`, see {@link loadTopologyPlugins}), resolves every node's impl and parses its
 * params with the impl's schema. What `kb topology validate` runs; {@link buildMachineFromFile}
 * runs it first. Every problem that belongs to a place in the file is reported there, as
 * `file:line:col: path: message`:
 *
 * - an impl no registry provides (`COMPONENT_UNKNOWN_IMPL`, listing the impls of the kind, or
 *   saying which plug-in to add to `plugins:` for a qualified name) at the `impl:` that set it:
 *   the last override matching the node that sets `impl`, else the template (`pe_template.
 *   components.<kind>`, `cube.hbm`, `cube.xbar`, ..., `sip.io_cpu`);
 * - params an impl rejects (`COMPONENT_INVALID_PARAMS`) at the param's value (an unknown param at
 *   its key, with a "did you mean"): the last override matching the node that sets that key,
 *   else the template's `params`;
 * - a plug-in of `plugins:` that cannot be found or imported (`COMPONENT_PLUGIN_NOT_FOUND`) at its
 *   entry of `plugins:` (a `KbError` whose context is `file`, `line`, `col`);
 * - a PE whose TCM does not hold its IPCQ slots plus the scheduler's reserved TCM, or is larger
 *   than its TCM window of the device address (`COMPONENT_INVALID_PARAMS`, see
 *   {@link peTcmBudgetProblems}) at `reserved_tcm_bytes` (at `capacity_bytes` when only that is
 *   written).
 *
 * The topology's structural limits (SIPs, cubes, PEs within the device address, memory sizes, the
 * graph's size) are checked by its schema before anything is expanded (`topologyLimitIssues`).
 *
 * A place that is not written (a default) is reported at its nearest written ancestor. Nodes
 * failing the same way at the same place are reported once, with a count
 * (`(16 nodes, e.g. sip0.cube0.pe0.pe_gemm)`).
 *
 * Throws `YamlValidationError` (codes above, and the topology's own `TOPOLOGY_*` errors), and
 * what {@link loadTopologyPlugins} throws.
 */
export async function checkTopologyComponents(
  path: string,
  options: CheckTopologyComponentsOptions,
): Promise<TopologyComponents> {
  const registryFor = (options as Partial<CheckTopologyComponentsOptions> | undefined)?.registryFor;
  if (registryFor === undefined) {
    throw new KbError(
      "COMPONENT_UNKNOWN_IMPL",
      `${path}: checkTopologyComponents needs options.registryFor, which builds the registry the ` +
        "nodes' impls resolve in from the plug-ins loaded: pass { registryFor: defaultRegistry } " +
        "with defaultRegistry of @kb/builtins (the built-in models plus the plug-ins).",
      { context: { file: path } },
    );
  }
  const { topology, graph, warnings } = loadTopologyGraphFile(path);
  const plugins = await loadTopologyPlugins(path, topology, options.plugins, options.shared);
  const registry = registryFor(plugins);
  const places = new TopologyPlaces(path, topology);
  const unknown = unknownImplIssues(graph, registry, places);
  if (unknown.length > 0) throw new YamlValidationError("COMPONENT_UNKNOWN_IMPL", path, unknown);
  const params = paramsIssues(graph, registry, places);
  if (params.length > 0) throw new YamlValidationError("COMPONENT_INVALID_PARAMS", path, params);
  const tcm = tcmIssues(graph, registry, places);
  if (tcm.length > 0) throw new YamlValidationError("COMPONENT_INVALID_PARAMS", path, tcm);
  return { topology, graph, plugins, registry, warnings };
}

/** Where the impl and params of the topology's nodes are written. */
class TopologyPlaces {
  readonly file: string;
  private readonly topology: Topology;
  private readonly matchers: ((id: string) => boolean)[];
  private locator: ((path: readonly PropertyKey[], options?: { key?: boolean }) => YamlPlace) | null = null;

  constructor(file: string, topology: Topology) {
    this.file = file;
    this.topology = topology;
    this.matchers = topology.overrides.map(({ match }) => {
      if (!isIdGlob(match)) return (id: string) => id === match;
      const pattern = idGlobToRegExp(match);
      return (id: string) => pattern.test(id);
    });
  }

  /** Where the impl of `node` is written (or would be). */
  impl(node: TopologyNode): Located {
    for (let i = this.topology.overrides.length - 1; i >= 0; i--) {
      const override = this.topology.overrides[i];
      if (override?.impl !== undefined && this.matches(i, node.id)) {
        return this.locate(["overrides", i, "impl"]);
      }
    }
    return this.locate([...templateOf(node.kind), "impl"]);
  }

  /** Where param `path` of `node` is written (its key, with `key`). */
  param(node: TopologyNode, path: readonly (string | number)[], key = false): Located {
    const first = path[0];
    if (first !== undefined) {
      for (let i = this.topology.overrides.length - 1; i >= 0; i--) {
        const params = this.topology.overrides[i]?.params;
        if (params !== undefined && Object.hasOwn(params, String(first)) && this.matches(i, node.id)) {
          return this.locate(["overrides", i, "params", ...path], key);
        }
      }
    }
    const template = templateOf(node.kind);
    // Fields the topology writes beside params (cube.hbm.channels, cube.xbar.first_flit_ns) take
    // precedence over params of the same name.
    if (first !== undefined && !["kind", "impl", "params"].includes(String(first))) {
      const beside = this.locate([...template, ...path], key);
      if (beside.exact) return beside;
    }
    return this.locate([...template, "params", ...path], key);
  }

  private matches(index: number, id: string): boolean {
    return (this.matchers[index] as (id: string) => boolean)(id);
  }

  private locate(path: readonly (string | number)[], key = false): Located {
    this.locator ??= yamlLocator(readTopologyText(this.file));
    const place = this.locator(path, { key });
    return {
      line: place.line,
      col: place.col,
      path: formatIssuePath(path),
      exact: place.found === path.length,
    };
  }
}

interface Located {
  readonly line: number;
  readonly col: number;
  /** The dotted path of the place (`overrides[2].impl`), written or not. */
  readonly path: string;
  /** Whether the whole path is written in the file (else the position is its nearest ancestor's). */
  readonly exact: boolean;
}

// Where each non-PE kind's template sits in the file; PE components are under pe_template.
const TEMPLATES: Readonly<Record<string, readonly string[]>> = {
  hbm_ctrl: ["cube", "hbm"],
  xbar: ["cube", "xbar"],
  bridge: ["cube", "bridge"],
  noc_router: ["cube", "noc"],
  ucie_port: ["cube", "ucie_port"],
  sram: ["cube", "sram"],
  m_cpu: ["cube", "m_cpu"],
  m_cpu_dma: ["cube", "m_cpu_dma"],
  io_cpu: ["sip", "io_cpu"],
};

function templateOf(kind: string): readonly string[] {
  if (kind.startsWith("pe_")) return ["pe_template", "components", kind];
  return TEMPLATES[kind] ?? [];
}

/** Where a grouped message names its nodes (`node X` or `16 nodes, e.g. X`). */
const NODES = "{nodes}";

/** Issues gathered per place and message, so a template error is one line, not one per node. */
class IssueGroups {
  private readonly groups = new Map<string, { located: Located; message: string; nodes: string[] }>();

  add(located: Located, message: string, nodeId: string): void {
    const key = `${located.line}:${located.col}\u0000${located.path}\u0000${message}`;
    const group = this.groups.get(key);
    if (group === undefined) this.groups.set(key, { located, message, nodes: [nodeId] });
    else group.nodes.push(nodeId);
  }

  /** One issue per group, with {@link NODES} in its message replaced by the nodes it hit. */
  issues(file: string): LocatedIssue[] {
    const issues: LocatedIssue[] = [];
    for (const { located, message, nodes } of this.groups.values()) {
      const who = nodes.length === 1 ? `node ${nodes[0]}` : `${nodes.length} nodes, e.g. ${nodes[0]}`;
      issues.push({
        file,
        line: located.line,
        col: located.col,
        path: located.path,
        message: message.replace(NODES, who),
      });
    }
    return issues.sort((a, b) => a.line - b.line || a.col - b.col || a.message.localeCompare(b.message));
  }
}

function unknownImplIssues(
  graph: TopologyGraph,
  registry: ComponentRegistry,
  places: TopologyPlaces,
): LocatedIssue[] {
  const groups = new IssueGroups();
  for (const node of graph.nodes) {
    if (node.impl === null) continue;
    try {
      registry.resolve(node);
    } catch (error) {
      if (!isKbError(error, "COMPONENT_UNKNOWN_IMPL")) throw error;
      // `unknown impl "x" for kind k (16 nodes, e.g. ...); impls registered for kind k: ...`
      const detail = error.detail;
      const cut = detail.indexOf("; ");
      const message =
        cut < 0 ? `${detail} (${NODES})` : `${detail.slice(0, cut)} (${NODES})${detail.slice(cut)}`;
      groups.add(places.impl(node), message, node.id);
    }
  }
  return groups.issues(places.file);
}

/**
 * The params every node's impl rejects, located. Parsed here rather than by `buildMachine`, so the
 * zod issues are at hand: an unknown top-level param is reported at its key, once per key.
 */
function paramsIssues(
  graph: TopologyGraph,
  registry: ComponentRegistry,
  places: TopologyPlaces,
): LocatedIssue[] {
  const groups = new IssueGroups();
  for (const node of graph.nodes) {
    if (node.impl === null) continue;
    const schema = registry.resolve(node).params as z.ZodType;
    const parsed = schema.safeParse(node.params, { reportInput: true });
    if (parsed.success) continue;
    for (const issue of parsed.error.issues) {
      const path = issue.path as (string | number)[];
      if (path.length === 0 && issue.code === "unrecognized_keys") {
        const allowed = paramNames(schema);
        for (const key of issue.keys) {
          const suggestion = closest(key, allowed);
          const message =
            `unknown param "${key}" of impl ${node.impl} (${NODES})` +
            (suggestion === undefined ? "." : `; did you mean "${suggestion}"?`) +
            (allowed.length > 0 ? ` Params of ${node.impl}: ${allowed.join(", ")}.` : "");
          groups.add(places.param(node, [key], true), message, node.id);
        }
        continue;
      }
      // In the file's words, as the topology's own schema errors are.
      const described =
        issue.code === "unrecognized_keys" ? schemaIssueText(issue) : describeSchemaIssue(issue, schema);
      const text = described.endsWith(".") ? described.slice(0, -1) : described;
      groups.add(places.param(node, path), `${text} (impl ${node.impl}; ${NODES}).`, node.id);
    }
  }
  return groups.issues(places.file);
}

/** The top-level param names of an impl's schema (empty when it is not an object schema). */
function paramNames(schema: z.ZodType): string[] {
  const shape = (schema as unknown as { shape?: unknown }).shape;
  return shape !== null && typeof shape === "object" ? Object.keys(shape).sort() : [];
}

/** The PEs whose TCM budget does not add up, located at the param to change. */
function tcmIssues(
  graph: TopologyGraph,
  registry: ComponentRegistry,
  places: TopologyPlaces,
): LocatedIssue[] {
  const groups = new IssueGroups();
  for (const pe of graph.byKind("pe")) {
    const cpu = graph.node(`${pe.id}.pe_cpu`);
    const scheduler = graph.node(`${pe.id}.pe_scheduler`);
    const tcm = graph.node(`${pe.id}.pe_tcm`);
    const budget = peTcmBudget({
      cpu: parsedParams(cpu, registry),
      scheduler: parsedParams(scheduler, registry),
      tcm: parsedParams(tcm, registry),
    });
    for (const problem of peTcmBudgetProblems(budget)) {
      const capacity = places.param(tcm, ["capacity_bytes"]);
      const reserved = places.param(scheduler, ["reserved_tcm_bytes"]);
      const located =
        problem.param === "pe_tcm.capacity_bytes" || (capacity.exact && !reserved.exact)
          ? capacity
          : reserved;
      groups.add(located, problem.message.replace(/\. /, ` (${NODES}). `), pe.id);
    }
  }
  return groups.issues(places.file);
}

/** A node's params as its impl parses them (defaults filled in); `paramsIssues` found none wrong. */
function parsedParams(node: TopologyNode, registry: ComponentRegistry): Record<string, unknown> {
  if (node.impl === null) return {};
  const parsed = (registry.resolve(node).params as z.ZodType).safeParse(node.params);
  return parsed.success && typeof parsed.data === "object" && parsed.data !== null
    ? (parsed.data as Record<string, unknown>)
    : {};
}
