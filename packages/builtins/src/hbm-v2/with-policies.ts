import type { ComponentDefinition } from "@kb/components";
import { defineMemoryModel } from "@kb/components";
import { KbError } from "@kb/errors";
import { hbmCtrlV2Definition } from "./hbm-ctrl-v2.js";
import { type HbmCtrlV2Params, type hbmCtrlV2Params, POLICY_OVERRIDES } from "./params.js";
import type { HbmPolicies } from "./policies/policy.js";

/** What `hbmCtrlV2WithPolicies` takes: a new impl name and the policies it replaces. */
export interface HbmCtrlV2PolicyOptions extends Partial<HbmPolicies> {
  /** The impl name of the new model (snake_case; a plug-in's is namespaced as `plugin:impl`). */
  readonly impl: string;
  /** What it models (`kb components list`); default: hbm_ctrl_v2's, with the policies named. */
  readonly description?: string;
}

/** The functions (or fields) each policy family must have. */
const REQUIRED: Record<keyof HbmPolicies, Record<string, string>> = {
  scheduler: { name: "string", inOrder: "boolean", rowHitCap: "number" },
  refresh: {
    name: "string",
    interval: "function",
    commandTime: "function",
    issue: "function",
    idleKeep: "function",
  },
  page: { name: "string", closeAfterRun: "function" },
};

/**
 * `hbm_ctrl_v2` with some of its policies replaced by your own objects: the rest (queues, timing,
 * the other policies, every param) stays the built-in's. The params still name policies
 * (`scheduler`, `refresh`, `page_policy`); the ones given here win.
 *
 * @example
 * export const lazyPage = hbmCtrlV2WithPolicies({
 *   impl: "hbm_lazy_page",
 *   page: { name: "close_on_conflict", closeAfterRun: (bank, row, queue) => !queue.queuedHit(bank, row) },
 * });
 */
export function hbmCtrlV2WithPolicies(
  options: HbmCtrlV2PolicyOptions,
): ComponentDefinition<typeof hbmCtrlV2Params> {
  const where = `hbmCtrlV2WithPolicies(${JSON.stringify(options?.impl)})`;
  if (options === null || typeof options !== "object" || typeof options.impl !== "string") {
    throw new KbError(
      "COMPONENT_INVALID_DEFINITION",
      `${where}: expects { impl: string, scheduler?, refresh?, page? }.`,
    );
  }
  const overrides: Partial<Record<keyof HbmPolicies, unknown>> = {};
  for (const family of Object.keys(REQUIRED) as (keyof HbmPolicies)[]) {
    const policy = options[family] as Record<string, unknown> | undefined;
    if (policy === undefined) continue;
    for (const [field, type] of Object.entries(REQUIRED[family])) {
      if (policy === null || typeof policy[field] !== type) {
        throw new KbError(
          "COMPONENT_INVALID_DEFINITION",
          `${where}: ${family}.${field} must be a ${type} (see HbmPolicies in @kb/components and docs/component-author-guide.md, "Changing one policy of hbm_ctrl_v2").`,
        );
      }
    }
    overrides[family] = policy;
  }
  const families = Object.keys(overrides);
  if (families.length === 0) {
    throw new KbError(
      "COMPONENT_INVALID_DEFINITION",
      `${where}: give at least one of scheduler, refresh, page.`,
    );
  }
  if (overrides.scheduler !== undefined && !((options.scheduler as HbmPolicies["scheduler"]).rowHitCap > 0)) {
    throw new KbError(
      "COMPONENT_INVALID_DEFINITION",
      `${where}: scheduler.rowHitCap must be > 0 (Infinity: no cap).`,
    );
  }
  const named = families.map((f) => `${f} ${(overrides[f as keyof HbmPolicies] as { name: string }).name}`);
  return defineMemoryModel({
    ...hbmCtrlV2Definition,
    impl: options.impl,
    description:
      options.description ?? `${hbmCtrlV2Definition.description} Policies replaced: ${named.join(", ")}.`,
    create: (context, params) => {
      const withPolicies: HbmCtrlV2Params & { [POLICY_OVERRIDES]: unknown } = {
        ...params,
        [POLICY_OVERRIDES]: overrides,
      };
      return hbmCtrlV2Definition.create(context, withPolicies);
    },
  });
}
