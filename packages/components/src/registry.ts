import { KbError } from "@kb/errors";
import type { PluginComponent } from "@kb/spec";
import type { TopologyNode } from "@kb/topology";
import { type ComponentDefinition, checkPlugin, type KbPlugin } from "./define.js";
import { forwardingComponentDefinition } from "./forwarding.js";
import { memoryComponentDefinition } from "./memory.js";
import { stageEngineComponentDefinition } from "./stage-engine.js";

/** One registered implementation, as listed by {@link ComponentRegistry.list}. */
export interface RegisteredImpl {
  /** The kind (one row per kind for impls that serve several). */
  readonly kind: string;
  /** The name to write in a topology's `impl:` (bare for built-ins, `"<package>:<impl>"` for plug-ins). */
  readonly name: string;
  /** `"built-in"` or the plug-in package name. */
  readonly source: string;
  readonly definition: ComponentDefinition;
}

/**
 * The implementations a machine can be built from: the built-ins plus the plug-ins registered
 * on it. A topology node's `impl` resolves here: a bare name is a built-in, `"@scope/pkg:impl"`
 * an impl of plug-in `@scope/pkg`.
 *
 * **Gotchas**: registries are plain values, one per run if you like; nothing is global, so two
 * runs in one process never see each other's plug-ins.
 */
export class ComponentRegistry {
  private readonly byName = new Map<string, RegisteredImpl[]>();
  private readonly plugins = new Map<string, KbPlugin>();

  /**
   * Registers built-in definitions (bare names): framework definitions, or timing models written
   * on `@kb/spec` (adapted by {@link componentDefinitionOf}). Throws
   * `COMPONENT_INVALID_DEFINITION` on a duplicate name.
   */
  registerBuiltins(definitions: readonly PluginComponent[]): this {
    for (const definition of definitions)
      this.add(definition.impl, "built-in", componentDefinitionOf(definition));
    return this;
  }

  /**
   * Registers a plug-in's components under `"<meta.name>:<impl>"`, its `@kb/spec` definitions
   * adapted into framework components ({@link componentDefinitionOf}). Registering the same plug-in
   * name twice is a `COMPONENT_INVALID_DEFINITION` error (two versions would be ambiguous).
   */
  registerPlugin(plugin: KbPlugin): this {
    checkPlugin(plugin, `plug-in ${JSON.stringify((plugin as KbPlugin | null)?.meta?.name ?? "?")}`);
    if (this.plugins.has(plugin.meta.name)) {
      throw new KbError(
        "COMPONENT_INVALID_DEFINITION",
        `plug-in ${plugin.meta.name} is registered twice; list it once (topology plugins: and --plugin are merged).`,
      );
    }
    this.plugins.set(plugin.meta.name, plugin);
    for (const definition of plugin.components) {
      this.add(`${plugin.meta.name}:${definition.impl}`, plugin.meta.name, componentDefinitionOf(definition));
    }
    return this;
  }

  /** Whether a plug-in of this package name is registered. */
  hasPlugin(name: string): boolean {
    return this.plugins.has(name);
  }

  /** Every registered impl, by kind then name (a row per kind an impl serves). */
  list(): RegisteredImpl[] {
    const rows: RegisteredImpl[] = [];
    for (const entries of this.byName.values()) rows.push(...entries);
    return rows.sort((a, b) => (a.kind === b.kind ? compare(a.name, b.name) : compare(a.kind, b.kind)));
  }

  /**
   * The definition that times `node` (by its `kind` and `impl`). Throws `COMPONENT_UNKNOWN_IMPL`
   * naming the node and listing the impls registered for its kind, or saying which plug-in to
   * load for a qualified name whose package is not registered.
   */
  resolve(node: Pick<TopologyNode, "id" | "kind" | "impl">): ComponentDefinition {
    const name = node.impl ?? "";
    const entries = this.byName.get(name);
    const match = entries?.find((entry) => entry.kind === node.kind);
    if (match !== undefined) return match.definition;
    const forKind = this.list().filter((entry) => entry.kind === node.kind);
    const available =
      forKind.length === 0
        ? `no impl is registered for kind ${node.kind}`
        : `impls registered for kind ${node.kind}: ${forKind.map((entry) => `${entry.name} (${entry.source})`).join(", ")}`;
    const colon = name.lastIndexOf(":");
    let hint: string;
    if (colon > 0 && !this.plugins.has(name.slice(0, colon))) {
      const pkg = name.slice(0, colon);
      hint = `plug-in ${pkg} is not loaded: add it to the topology's plugins: list (or pass --plugin), as the package name "${pkg}" or the path of its folder or file (./${pkg}, ./${pkg}.ts).`;
    } else if (entries !== undefined) {
      hint = `"${name}" implements kind ${entries.map((entry) => entry.kind).join(", ")}, not ${node.kind}.`;
    } else {
      hint = "Check the spelling, or load the plug-in that provides it.";
    }
    throw new KbError(
      "COMPONENT_UNKNOWN_IMPL",
      `unknown impl "${name}" for kind ${node.kind}; ${available}. ${hint}`,
      {
        context: { nodeId: node.id },
      },
    );
  }

  private add(name: string, source: string, definition: ComponentDefinition): void {
    const kinds = [definition.kind, ...(definition.alsoKinds ?? [])];
    const entries = this.byName.get(name) ?? [];
    for (const kind of kinds) {
      if (entries.some((entry) => entry.kind === kind)) {
        throw new KbError(
          "COMPONENT_INVALID_DEFINITION",
          `impl "${name}" for kind ${kind} is registered twice (${source}); impl names are unique per kind.`,
        );
      }
      entries.push({ kind, name, source, definition });
    }
    this.byName.set(name, entries);
  }
}

/** The framework definition made of each plain definition, so a definition adapts to one object. */
const adapted = new WeakMap<object, ComponentDefinition>();

/**
 * The framework's {@link ComponentDefinition} of a plug-in component: a timing model written on
 * `@kb/spec` (`contract` memory, stage_engine or forwarding) becomes the component that runs it
 * (a MemoryComponent, a StageEngine, a ForwardingComponent); a framework definition
 * (`defineComponent`) is itself. The same definition always gives the same object.
 */
export function componentDefinitionOf(definition: PluginComponent): ComponentDefinition {
  if (definition.contract === undefined) return definition as unknown as ComponentDefinition;
  let made = adapted.get(definition);
  if (made === undefined) {
    made =
      definition.contract === "memory"
        ? memoryComponentDefinition(definition)
        : definition.contract === "stage_engine"
          ? stageEngineComponentDefinition(definition)
          : forwardingComponentDefinition(definition);
    adapted.set(definition, made);
  }
  return made;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
