import { existsSync, readFileSync, realpathSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { isKbError, KbError } from "@kb/errors";
import type { OpLogger } from "@kb/oplog";
import {
  closest,
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
import { loadTopologyGraphFile } from "@kb/topology/node";
import type * as z from "zod";
import { checkPlugin, type KbPlugin } from "./define.js";
import { buildMachine, ComponentParamsError, defaultRegistry, type Machine } from "./machine.js";
import type { ComponentRegistry } from "./registry.js";
import type { Tracer } from "./trace.js";

// ---------------------------------------------------------------------------------------------
// Plug-in loading

/** Options of {@link loadPlugins}. */
export interface LoadPluginsOptions {
  /**
   * The directory to resolve package names from, as Node does: `node_modules/<name>` in it and in
   * every parent up to the filesystem root. Several directories are searched in order (the first
   * that has the package wins).
   */
  readonly from: string | readonly string[];
}

/**
 * Imports plug-in packages by npm name (the `plugins:` of a topology, `kb --plugin`) and returns
 * their default exports, checked. Each package is found under `node_modules/<name>` from
 * `options.from` upwards; its entry is `exports["."]` (a string, or its `import`/`node`/`default`
 * condition) or else `main`. A name listed twice is loaded once; the result follows the order of
 * first appearance.
 *
 * ```ts
 * const plugins = await loadPlugins(["kb-plugin-systolic-gemm"], { from: process.cwd() });
 * const machine = buildMachine(graph, { plugins });
 * ```
 *
 * Throws `COMPONENT_PLUGIN_NOT_FOUND` when a package is not installed (naming the directories
 * searched and the `npm install` to run) or fails to import (with the cause), and
 * `COMPONENT_INVALID_DEFINITION` when its default export is not a plug-in or its `meta.name` is
 * not the package name (impls are qualified by that name: `"<package>:<impl>"`).
 */
export async function loadPlugins(
  names: readonly string[],
  options: LoadPluginsOptions,
): Promise<KbPlugin[]> {
  const from = typeof options.from === "string" ? [options.from] : [...options.from];
  return Promise.all([...new Set(names)].map((name) => loadPlugin(name, from)));
}

// npm's rules for a package name, scoped or not (lower case, URL-safe).
const PACKAGE_NAME = /^(?:@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*$/;

async function loadPlugin(name: string, from: readonly string[]): Promise<KbPlugin> {
  if (!PACKAGE_NAME.test(name)) {
    const colon = name.lastIndexOf(":");
    const hint =
      colon > 0
        ? ` plugins: lists packages; write "${name.slice(0, colon)}" there and "${name}" in an impl:.`
        : " Plug-ins are npm packages such as kb-plugin-systolic-gemm or @acme/kb-plugin-banked-hbm.";
    throw new KbError("COMPONENT_PLUGIN_NOT_FOUND", `"${name}" is not an npm package name.${hint}`);
  }
  const directory = findPackage(name, from);
  if (directory === undefined) {
    const searched = from.map((dir) => resolve(dir)).join(" and ");
    throw new KbError(
      "COMPONENT_PLUGIN_NOT_FOUND",
      `plug-in package "${name}" is not installed: no node_modules/${name} in ${searched} or any parent directory. ` +
        `Install it where the topology is (npm install ${name}), or fix the name.`,
    );
  }
  let file: string;
  let module: { default?: unknown };
  try {
    file = realpathSync(entryOf(directory));
  } catch (error) {
    throw new KbError(
      "COMPONENT_PLUGIN_NOT_FOUND",
      `cannot import plug-in package "${name}" from ${directory}: ${(error as Error).message}. ` +
        "Reinstall it (or build it, if it is a workspace package whose dist is missing).",
      { cause: error },
    );
  }
  try {
    module = (await import(pathToFileURL(file).href)) as { default?: unknown };
  } catch (error) {
    throw new KbError(
      "COMPONENT_PLUGIN_NOT_FOUND",
      `cannot import plug-in package "${name}" (${file}): ${(error as Error).message ?? String(error)}`,
      { cause: error },
    );
  }
  const source = `plug-in package "${name}" (${file})`;
  if (module.default === undefined) {
    throw new KbError(
      "COMPONENT_INVALID_DEFINITION",
      `${source} has no default export. A plug-in default-exports definePlugin({ meta: { name, version }, components: [...] }).`,
    );
  }
  const plugin = checkPlugin(module.default, source);
  if (plugin.meta.name !== name) {
    throw new KbError(
      "COMPONENT_INVALID_DEFINITION",
      `${source} calls itself "${plugin.meta.name}"; meta.name must be the package name "${name}", because impls are written "${name}:<impl>".`,
    );
  }
  return plugin;
}

/** The directory of package `name` under `node_modules` of a directory of `from` or a parent. */
function findPackage(name: string, from: readonly string[]): string | undefined {
  for (const start of from) {
    let directory = resolve(start);
    for (;;) {
      const candidate = join(directory, "node_modules", name);
      if (existsSync(join(candidate, "package.json"))) return candidate;
      const parent = dirname(directory);
      if (parent === directory) break;
      directory = parent;
    }
  }
  return undefined;
}

/** The entry file of an installed package: `exports["."]` (import/node/default) or `main`. */
function entryOf(directory: string): string {
  const json = JSON.parse(readFileSync(join(directory, "package.json"), "utf8")) as {
    exports?: unknown;
    main?: unknown;
  };
  const target = exportTarget(json.exports) ?? (typeof json.main === "string" ? json.main : "index.js");
  const file = join(directory, target);
  if (!existsSync(file)) throw new Error(`its entry file ${file} does not exist`);
  return file;
}

function exportTarget(exports: unknown): string | undefined {
  if (exports === null || typeof exports !== "object" || Array.isArray(exports))
    return conditionTarget(exports);
  const keys = Object.keys(exports);
  // A map of subpaths ("." , "./node") or directly the conditions of ".".
  if (keys.some((key) => key.startsWith(".")))
    return conditionTarget((exports as Record<string, unknown>)["."]);
  return conditionTarget(exports);
}

function conditionTarget(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (Array.isArray(value)) {
    for (const item of value) {
      const target = conditionTarget(item);
      if (target !== undefined) return target;
    }
    return undefined;
  }
  if (value === null || typeof value !== "object") return undefined;
  const conditions = value as Record<string, unknown>;
  for (const condition of ["import", "node", "default"]) {
    if (condition in conditions) {
      const target = conditionTarget(conditions[condition]);
      if (target !== undefined) return target;
    }
  }
  return undefined;
}

/**
 * The plug-ins a topology file needs: its `plugins:` plus `extra` (the CLI's `--plugin`), merged
 * without duplicates and resolved from the file's directory first, then the current directory.
 *
 * Throws what {@link loadPlugins} throws; for a package listed in the file, the error is located at
 * its entry of `plugins:` (`file:line:col`).
 */
export async function loadTopologyPlugins(
  file: string,
  topology: Pick<Topology, "plugins">,
  extra: readonly string[] = [],
): Promise<KbPlugin[]> {
  const from = [dirname(resolve(file)), process.cwd()];
  const names = [...new Set([...topology.plugins, ...extra])];
  return Promise.all(
    names.map(async (name) => {
      try {
        return (await loadPlugins([name], { from }))[0] as KbPlugin;
      } catch (error) {
        const index = topology.plugins.indexOf(name);
        if (!isKbError(error) || index < 0) throw error;
        const place = yamlLocator(readFileSync(file, "utf8"))(["plugins", index]);
        throw new KbError(error.code, error.detail, {
          context: { file, line: place.line, col: place.col },
          cause: error.cause ?? error,
        });
      }
    }),
  );
}

// ---------------------------------------------------------------------------------------------
// Building a machine from a file

/** Options of {@link buildMachineFromFile}. */
export interface BuildMachineFromFileOptions {
  /** Plug-in packages besides the topology's `plugins:` (the CLI's `--plugin`). */
  readonly plugins?: readonly string[];
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
  /** The machine, ready to submit commands to and run. */
  readonly machine: Machine;
}

/**
 * Loads a topology file, imports its plug-ins (its `plugins:` plus `options.plugins`, see
 * {@link loadTopologyPlugins}) and builds the machine. Every problem that belongs to a place in
 * the file is reported there, as `file:line:col: path: message`:
 *
 * - an impl no registry provides (`COMPONENT_UNKNOWN_IMPL`, listing the impls of the kind, or
 *   saying which plug-in to add to `plugins:` for a qualified name) at the `impl:` that set it:
 *   the last override matching the node that sets `impl`, else the template (`pe_template.
 *   components.<kind>`, `cube.hbm`, `cube.xbar`, ..., `sip.io_cpu`);
 * - params an impl rejects (`COMPONENT_INVALID_PARAMS`) at the param's value: the last override
 *   matching the node that sets that key, else the template's `params`.
 *
 * A place that is not written (a default) is reported at its nearest written ancestor. Nodes
 * failing the same way at the same place are reported once, with a count
 * (`(16 nodes, e.g. sip0.cube0.pe0.pe_gemm)`).
 *
 * Throws `YamlValidationError` (codes above, and the topology's own `TOPOLOGY_*` errors), and
 * what {@link loadTopologyPlugins} throws.
 */
export async function buildMachineFromFile(
  path: string,
  options: BuildMachineFromFileOptions = {},
): Promise<MachineFromFile> {
  const { topology, graph } = loadTopologyGraphFile(path);
  const plugins = await loadTopologyPlugins(path, topology, options.plugins);
  const registry = defaultRegistry(plugins);
  const places = new TopologyPlaces(path, topology);
  const unknown = unknownImplIssues(graph, registry, places);
  if (unknown.length > 0) throw new YamlValidationError("COMPONENT_UNKNOWN_IMPL", path, unknown);
  try {
    const machine = buildMachine(graph, {
      registry,
      opLogger: options.opLogger ?? null,
      tracer: options.tracer ?? null,
    });
    return { topology, graph, machine };
  } catch (error) {
    if (!(error instanceof ComponentParamsError)) throw error;
    throw locatedParamsError(error, graph, registry, places);
  }
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
    this.locator ??= yamlLocator(readFileSync(this.file, "utf8"));
    const place = this.locator(path, { key });
    return { line: place.line, col: place.col, path: formatPath(path), exact: place.found === path.length };
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

function formatPath(path: readonly (string | number)[]): string {
  let text = "";
  for (const segment of path) {
    if (typeof segment === "number") text += `[${segment}]`;
    else text += text === "" ? segment : `.${segment}`;
  }
  return text === "" ? "<top level>" : text;
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

function locatedParamsError(
  error: ComponentParamsError,
  graph: TopologyGraph,
  registry: ComponentRegistry,
  places: TopologyPlaces,
): YamlValidationError {
  const groups = new IssueGroups();
  // ParamsIssue keeps only a message; for the node-level issues, the schema is asked again for
  // its issues (same schema, same params: same issues in the same order), which name the keys.
  const rootIssues = new Map<string, { issues: z.core.$ZodIssue[]; next: number }>();
  for (const issue of error.issues) {
    const node = graph.node(issue.nodeId);
    if (issue.path.length === 0) {
      const schema = registry.resolve(node).params as z.ZodType;
      let root = rootIssues.get(node.id);
      if (root === undefined) {
        const parsed = schema.safeParse(node.params);
        const issues = parsed.success ? [] : parsed.error.issues.filter((each) => each.path.length === 0);
        root = { issues, next: 0 };
        rootIssues.set(node.id, root);
      }
      const original = root.issues[root.next++];
      if (original?.code === "unrecognized_keys") {
        const allowed = paramNames(schema);
        for (const key of original.keys) {
          const suggestion = closest(key, allowed);
          const message =
            `unknown param "${key}" of impl ${node.impl} (${NODES})` +
            (suggestion === undefined ? "." : `; did you mean "${suggestion}"?`) +
            (allowed.length > 0 ? ` Params of ${node.impl}: ${allowed.join(", ")}.` : "");
          groups.add(places.param(node, [key], true), message, node.id);
        }
        continue;
      }
    }
    const text = issue.message.endsWith(".") ? issue.message.slice(0, -1) : issue.message;
    groups.add(places.param(node, issue.path), `${text} (impl ${node.impl}; ${NODES}).`, node.id);
  }
  return new YamlValidationError("COMPONENT_INVALID_PARAMS", places.file, groups.issues(places.file));
}

/** The top-level param names of an impl's schema (empty when it is not an object schema). */
function paramNames(schema: z.ZodType): string[] {
  const shape = (schema as unknown as { shape?: unknown }).shape;
  return shape !== null && typeof shape === "object" ? Object.keys(shape).sort() : [];
}
