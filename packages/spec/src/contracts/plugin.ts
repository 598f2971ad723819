import { KbError } from "@kb/errors";
import type * as z from "zod";
import type { EnergyTable } from "./energy.js";
import { checkForwardingModel, type ForwardingModelSpec } from "./forwarding-model.js";
import { checkMemoryModel, type MemoryModelSpec } from "./memory-model.js";
import { SPEC_VERSION } from "./model-definition.js";
import type { ModelStatInfo } from "./model-stats.js";
import { checkStageEngine, type StageEngineSpec } from "./stage-engine.js";

/** A definition made by one of the contracts' `define*` functions (plain data the framework adapts). */
export type TimingModelSpec = MemoryModelSpec | StageEngineSpec | ForwardingModelSpec;

/**
 * A component the framework's own escape hatch made (`defineComponent` of `@kb/components`: a
 * hand-written `Component` subclass). Opaque to the spec: it has no `contract`, and its `create`
 * builds the framework's component itself.
 */
export interface FrameworkComponentDefinition {
  readonly contract?: undefined;
  readonly kind: string;
  readonly alsoKinds?: readonly string[];
  readonly impl: string;
  readonly description: string;
  readonly params: z.ZodType;
  readonly analytic?: boolean;
  readonly counters?: readonly ModelStatInfo[];
  readonly energy?: EnergyTable;
  create(context: never, params: never): unknown;
}

/** What a plug-in lists in `components`: timing models written on the contracts, or framework components. */
export type PluginComponent = TimingModelSpec | FrameworkComponentDefinition;

/** Metadata of a plug-in package (`meta` of its default export). */
export interface PluginMeta {
  /** The npm package name (`"@acme/kb-plugin-banked-hbm"`); qualifies its impls (`"<name>:<impl>"`). */
  readonly name: string;
  /** Its version. */
  readonly version: string;
}

/** Where a loaded plug-in's code lies: an absolute, real path ({@link KbPlugin.codeSource}). */
export type PluginCodeSource = { readonly folder: string } | { readonly file: string };

/** What a plug-in package default-exports: its metadata and component definitions. */
export interface KbPlugin {
  readonly meta: PluginMeta;
  readonly components: readonly PluginComponent[];
  /**
   * Set by the loader (`loadPlugins` of `@kb/components/node`), not written by a plug-in: where
   * the code it loaded lies, a package folder (its files but node_modules and dot-folders) or a
   * plug-in file (it and the files it imports by relative path). The run manifest's plug-in digest
   * covers those files (`pluginCodeDigest` of `@kb/runtime/node`), so an edit to a model is a new
   * run, not a cached one.
   */
  readonly codeSource?: PluginCodeSource;
}

/**
 * Declares a plug-in (the default export of a `kb-plugin` package): plain data, checked at once.
 *
 * ```ts
 * export default definePlugin({
 *   meta: { name: "kb-plugin-closed-page-hbm", version: "0.1.0" },
 *   components: [closedPageHbm],
 * });
 * ```
 *
 * Throws `COMPONENT_INVALID_DEFINITION` when `meta.name`/`meta.version` are missing, a component
 * is not a definition, or a definition's contract is unknown or of another `specVersion`.
 */
export function definePlugin(plugin: KbPlugin): KbPlugin {
  return checkPlugin(plugin, "definePlugin");
}

const CONTRACT_CHECKS: Readonly<Record<TimingModelSpec["contract"], (definition: unknown) => void>> = {
  memory: checkMemoryModel,
  stage_engine: checkStageEngine,
  forwarding: checkForwardingModel,
};

/**
 * Checks a value claimed to be a plug-in (what `definePlugin` got, or what `import()` of a
 * package gave), `source` naming it in messages; returns it typed. Each timing-model definition
 * is checked again as its contract's `define*` function would (a hand-built object gets the same
 * messages), and must carry this spec's {@link SPEC_VERSION}.
 */
export function checkPlugin(value: unknown, source: string): KbPlugin {
  const plugin = value as Partial<KbPlugin> | null;
  const fail = (what: string): never => {
    throw new KbError(
      "COMPONENT_INVALID_DEFINITION",
      `${source}: ${what} A plug-in default-exports definePlugin({ meta: { name, version }, components: [...] }).`,
    );
  };
  if (plugin === null || typeof plugin !== "object") return fail("the plug-in is not an object.");
  const meta = plugin.meta;
  if (
    meta === undefined ||
    meta === null ||
    typeof meta.name !== "string" ||
    meta.name === "" ||
    typeof meta.version !== "string"
  ) {
    fail("meta.name and meta.version must be strings.");
  }
  if (!Array.isArray(plugin.components) || plugin.components.length === 0) {
    fail(
      "components must be a non-empty array of definitions (defineMemoryModel(...), defineStageEngine(...), ...).",
    );
  }
  for (const component of plugin.components as unknown[]) {
    const c = component as { kind?: unknown; create?: unknown; contract?: unknown } | null;
    // A timing model is checked by its contract below (a stage engine has no create).
    if (
      c === null ||
      typeof c !== "object" ||
      typeof c.kind !== "string" ||
      (c.contract === undefined && typeof c.create !== "function")
    ) {
      fail(
        `components contains ${JSON.stringify(component) ?? String(component)}, which is not a component definition.`,
      );
    }
    const { contract, specVersion } = c as { contract?: unknown; specVersion?: unknown };
    if (contract === undefined) continue;
    const check =
      typeof contract === "string" ? CONTRACT_CHECKS[contract as TimingModelSpec["contract"]] : undefined;
    const impl = JSON.stringify((c as { impl?: unknown }).impl ?? "?");
    if (check === undefined || !Object.hasOwn(CONTRACT_CHECKS, contract as string)) {
      fail(
        `component ${impl} follows contract ${JSON.stringify(contract)}, which this kb does not know (it knows ${Object.keys(CONTRACT_CHECKS).join(", ")}); update kernbench, or write it with defineMemoryModel, defineStageEngine or defineForwardingModel of @kb/spec.`,
      );
    }
    if (specVersion !== SPEC_VERSION) {
      fail(
        `component ${impl} was written for @kb/spec specVersion ${JSON.stringify(specVersion)}; this kb reads specVersion ${SPEC_VERSION}. Build the plug-in against the @kb/spec this kb ships (or a kb that reads its version).`,
      );
    }
    (check as (definition: unknown) => void)(component);
  }
  return plugin as KbPlugin;
}
