import { KbError } from "@kb/errors";
import type * as z from "zod";
import type { Component, ComponentContext } from "./component.js";
import type { ModelStatInfo } from "./model-stats.js";

/**
 * A component implementation with its metadata: the kind it implements, its name, what it models,
 * its params schema (zod; defaults documented with `.describe`) and how to create an instance.
 */
export interface ComponentDefinition<S extends z.ZodType = z.ZodType> {
  /** The component kind this impl times (`"pe_gemm"`, `"xbar"`, ...). */
  readonly kind: string;
  /** Implementation name (`"pe_gemm_v1"`); unique per registry. */
  readonly impl: string;
  /** One or two sentences: what it models and its timing formula in words. */
  readonly description: string;
  /** The params schema; `params` of the topology node are parsed with it (unknown keys are errors). */
  readonly params: S;
  /** Extra kinds this impl may also time (the transit impl serves several kinds). */
  readonly alsoKinds?: readonly string[];
  /**
   * True when the impl's uncontended timing is exactly the documented formula
   * (docs/latency-model.md), so `kb probe` holds it to within 1% of that formula. Default false (a
   * plug-in's own model, a bank-aware memory, ...): the probe then checks only that it is never
   * faster than the formula, and says the 1% check was not made and why.
   */
  readonly analytic?: boolean;
  /**
   * The counters the impl publishes (`Component.modelStats()`, a model's `stats()`): name, unit
   * and sentence, for `kb components list`. Optional: a model may publish counters it does not
   * declare (their names are then known only after a run).
   */
  readonly counters?: readonly ModelStatInfo[];
  /** Creates the instance for one topology node. */
  readonly create: (context: ComponentContext, params: z.output<S>) => Component;
}

const NAME = /^[a-z][a-z0-9_]*$/;

/**
 * Declares a component implementation (DESIGN §5). Checks the metadata at once, so a plug-in with
 * a malformed definition fails when it is loaded, not in the middle of a run.
 *
 * ```ts
 * export const myGemm = defineComponent({
 *   kind: "pe_gemm",
 *   impl: "pe_gemm_fast",
 *   description: "...",
 *   params: z.strictObject({ freq_ghz: z.number().positive().default(1) }),
 *   create: (context, params) => new MyGemm(context, params),
 * });
 * ```
 *
 * Throws `COMPONENT_INVALID_DEFINITION` for a kind or impl that is not a snake_case name, a
 * missing description, params that are not a zod schema or a missing `create`.
 */
export function defineComponent<S extends z.ZodType>(
  definition: ComponentDefinition<S>,
): ComponentDefinition<S> {
  const where = `defineComponent(${JSON.stringify(definition?.impl ?? "?")})`;
  const fail = (what: string): never => {
    throw new KbError("COMPONENT_INVALID_DEFINITION", `${where}: ${what}`);
  };
  if (definition === null || typeof definition !== "object") fail("expects an object.");
  for (const kind of [definition.kind, ...(definition.alsoKinds ?? [])]) {
    if (typeof kind !== "string" || !NAME.test(kind)) {
      fail(`kind must be a snake_case name such as "pe_gemm", got ${JSON.stringify(kind)}.`);
    }
  }
  if (typeof definition.impl !== "string" || !NAME.test(definition.impl)) {
    fail(`impl must be a snake_case name such as "pe_gemm_v2", got ${JSON.stringify(definition.impl)}.`);
  }
  if (typeof definition.description !== "string" || definition.description.trim() === "") {
    fail("description must say what the impl models (shown by `kb components list`).");
  }
  const params = definition.params as unknown as { safeParse?: unknown } | undefined;
  if (params === undefined || typeof params.safeParse !== "function") {
    fail("params must be a zod schema (z.strictObject({...})).");
  }
  if (typeof definition.create !== "function") fail("create(context, params) must be a function.");
  if (definition.analytic !== undefined && typeof definition.analytic !== "boolean") {
    fail(`analytic must be true, false or left out, got ${JSON.stringify(definition.analytic)}.`);
  }
  if (definition.counters !== undefined) {
    if (!Array.isArray(definition.counters))
      fail("counters must be an array of { name, unit, description }.");
    const seen = new Set<string>();
    for (const counter of definition.counters) {
      const { name, unit, description } = (counter ?? {}) as Partial<ModelStatInfo>;
      if (typeof name !== "string" || !NAME.test(name) || seen.has(name)) {
        fail(`counters: each needs a snake_case name unique in the impl, got ${JSON.stringify(name)}.`);
      }
      if (typeof unit !== "string" || unit === "" || typeof description !== "string" || description === "") {
        fail(`counters: "${name}" needs a unit ("count", "ns", "bytes") and a description.`);
      }
      seen.add(name as string);
    }
  }
  return Object.freeze({ ...definition });
}

/** Metadata of a plug-in package (`meta` of its default export). */
export interface PluginMeta {
  /** The npm package name (`"@acme/kb-plugin-banked-hbm"`); qualifies its impls (`"<name>:<impl>"`). */
  readonly name: string;
  /** Its version. */
  readonly version: string;
}

/** What a plug-in package default-exports: its metadata and component definitions. */
/** Where a loaded plug-in's code lies: an absolute, real path ({@link KbPlugin.codeSource}). */
export type PluginCodeSource = { readonly folder: string } | { readonly file: string };

export interface KbPlugin {
  readonly meta: PluginMeta;
  readonly components: readonly ComponentDefinition[];
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
 * Declares a plug-in (the default export of a `kb-plugin` package). Checks the shape; throws
 * `COMPONENT_INVALID_DEFINITION` when `meta.name`/`meta.version` are missing or a component is
 * not a {@link defineComponent} result.
 */
export function definePlugin(plugin: KbPlugin): KbPlugin {
  return checkPlugin(plugin, "definePlugin");
}

/** @internal Checks a value claimed to be a plug-in (also what `import()` of a package gave). */
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
    typeof meta.name !== "string" ||
    meta.name === "" ||
    typeof meta.version !== "string"
  ) {
    fail("meta.name and meta.version must be strings.");
  }
  if (!Array.isArray(plugin.components) || plugin.components.length === 0) {
    fail("components must be a non-empty array of defineComponent(...) results.");
  }
  for (const component of plugin.components as unknown[]) {
    const c = component as Partial<ComponentDefinition> | null;
    if (c === null || typeof c !== "object" || typeof c.kind !== "string" || typeof c.create !== "function") {
      fail(
        `components contains ${JSON.stringify(component) ?? String(component)}, which is not a component definition.`,
      );
    }
  }
  return plugin as KbPlugin;
}
