import type { Environment } from "@kb/des";
import {
  type ForwardingModel,
  type ForwardingModelSpec,
  type ForwardingModelContext as SpecForwardingModelContext,
  type ForwardingModelDefinition as SpecForwardingModelDefinition,
  defineForwardingModel as specDefineForwardingModel,
} from "@kb/spec";
import type * as z from "zod";
import type { ComponentContext } from "./component.js";
import { adaptedDefinition, type ComponentDefinition } from "./define.js";
import { ForwardingComponent } from "./forwarding-component.js";

// The forwarding contract (the packet a hop sees, the model, its definition, the kinds and the
// topology's params) is @kb/spec's; here is the framework's side: the context it creates a model
// with and the adaptation into a ForwardingComponent (forwarding-component.ts).
export type { ForwardingKind, ForwardingModel, HopPacket, HopPart } from "@kb/spec";
export { forwardingTopologyParams } from "@kb/spec";

/**
 * What a forwarding model is created with, as the framework gives it: the contract's context
 * (`env`, `id`, `inputs`, `outputs`, `send`, `resume`, `service`) plus the engine's
 * `Environment`, the topology node and the machine, for built-ins and models written on
 * `@kb/components`.
 */
export interface ForwardingModelContext extends SpecForwardingModelContext, ComponentContext {
  readonly env: Environment;
}

/**
 * A forwarding model's declaration on the framework ({@link defineForwardingModel} of
 * `@kb/components`): the contract's, whose `create` receives the framework's
 * {@link ForwardingModelContext}.
 */
export interface ForwardingModelDefinition<S extends z.ZodType = z.ZodType>
  extends Omit<SpecForwardingModelDefinition<S>, "create"> {
  /** Creates the model for one topology node. */
  create(context: ForwardingModelContext, params: z.output<S>): ForwardingModel;
}

/**
 * Declares a forwarding model on the framework: `@kb/spec`'s {@link specDefineForwardingModel}
 * (the same checks and messages), adapted at once into a {@link ComponentDefinition} (a
 * {@link ForwardingComponent} per node). A plug-in writes `defineForwardingModel` of `@kb/spec`
 * instead (plain data the registry adapts the same way); this one is for built-ins and models that
 * need the framework's context.
 */
export function defineForwardingModel<S extends z.ZodType>(
  definition: ForwardingModelDefinition<S>,
): ComponentDefinition<S> {
  return forwardingComponentDefinition(specDefineForwardingModel(definition)) as ComponentDefinition<S>;
}

/**
 * The framework's component definition of a forwarding model's plain definition (what the
 * registry registers for a plug-in's `defineForwardingModel` of `@kb/spec`).
 */
export function forwardingComponentDefinition(
  definition: ForwardingModelSpec | ForwardingModelDefinition,
): ComponentDefinition {
  return adaptedDefinition(
    definition,
    (context, params) => new ForwardingComponent(context, params, definition as ForwardingModelDefinition),
  );
}
