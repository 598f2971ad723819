import { KbError } from "@kb/errors";
import {
  checkDefinitionBase,
  type EnergyTable,
  type ModelDefinitionBase,
  type ModelStatInfo,
} from "@kb/spec";
import type * as z from "zod";
import type { Component, ComponentContext } from "./component.js";

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
  /**
   * What the impl's actions cost in energy and what it draws at rest (`EnergyTable` of
   * `@kb/spec`, docs/energy.md); without one the run uses the built-in table of its kind.
   */
  readonly energy?: EnergyTable;
  /** Creates the instance for one topology node. */
  readonly create: (context: ComponentContext, params: z.output<S>) => Component;
}

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
  checkDefinitionBase(definition, where);
  if (typeof definition.create !== "function") {
    throw new KbError(
      "COMPONENT_INVALID_DEFINITION",
      `${where}: create(context, params) must be a function.`,
    );
  }
  return Object.freeze({ ...definition });
}

/**
 * The framework definition of a checked timing-model definition (a memory model, a stage engine, a
 * forwarding model): its metadata as declared, and `create` making the framework's component.
 * @internal
 */
export function adaptedDefinition(
  definition: ModelDefinitionBase,
  create: ComponentDefinition["create"],
): ComponentDefinition {
  return defineComponent({
    kind: definition.kind,
    ...(definition.alsoKinds === undefined ? {} : { alsoKinds: definition.alsoKinds }),
    impl: definition.impl,
    description: definition.description,
    params: definition.params,
    ...(definition.analytic === undefined ? {} : { analytic: definition.analytic }),
    ...(definition.counters === undefined ? {} : { counters: definition.counters }),
    ...(definition.energy === undefined ? {} : { energy: definition.energy }),
    create,
  });
}

// A plug-in is plain data, declared and checked by @kb/spec (definePlugin); the registry adapts
// its timing-model definitions into components (registry.ts). Re-exported here, where plug-ins
// first found them.
export type { KbPlugin, PluginCodeSource, PluginMeta } from "@kb/spec";
export { checkPlugin, definePlugin } from "@kb/spec";
