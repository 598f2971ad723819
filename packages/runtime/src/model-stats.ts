import { defaultRegistry } from "@kb/builtins";
import type { ComponentRegistry, ModelStat, ModelStatInfo } from "@kb/components";
import * as z from "zod";

// The counters timing models publish (`ModelStat` of @kb/components) in the results: their
// schema (`components[].stats`), the busiest model's for `kb run`, and a counter as a sweep
// metric (`stats.<component id | kind | impl>.<counter>`).

/** `components[i].stats`. */
export const modelStatsSchema = z
  .array(
    z.object({
      name: z.string().describe("snake_case, unique within the model: row_hits, act, credit_stalls."),
      unit: z.string().describe("What one unit counts: count, ns, bytes, cycles."),
      description: z.string().describe("One sentence: what is counted."),
      total: z.number().describe("The value over the whole model (the sum of perPort when both are given)."),
      perPort: z
        .array(z.number())
        .optional()
        .describe(
          "The value per port or lane in port order (an HBM pseudo-channel: port p is channel floor(p / pseudo_channels)).",
        ),
    }),
  )
  .optional()
  .describe(
    "The counters the component's timing model publishes (its stats(): hbm_ctrl_v2's row hits, misses, conflicts, ACT, PRE, RD, WR, REF per pseudo-channel); absent when it publishes none, and in results written before they were reported.",
  );

/** One published counter as the results hold it. */
export type ModelStatRow = NonNullable<z.infer<typeof modelStatsSchema>>[number];

/** `{ stats }` for a results row: a copy of what the model published, or nothing when it published none. */
export function modelStatsField(stats: readonly ModelStat[] | undefined): { stats?: ModelStatRow[] } {
  if (stats === undefined || stats.length === 0) return {};
  return {
    stats: stats.map(({ perPort, ...stat }) => ({
      ...stat,
      ...(perPort === undefined ? {} : { perPort: [...perPort] }),
    })),
  };
}

/** What {@link statsOfBusiestModel} reads of a results row. */
export interface StatsRow {
  readonly id: string;
  readonly kind: string;
  readonly impl: string;
  readonly utilisation: number;
  readonly stats?: readonly ModelStatRow[] | undefined;
}

/**
 * The busiest component that publishes counters (highest utilisation, the first id on a tie), for
 * `kb run`'s counters line; null when no component publishes any. A component whose counters are
 * all zero (an uncontended NOC router: no port wait, no credit stall) has nothing to show and is
 * passed over.
 */
export function statsOfBusiestModel<R extends StatsRow>(components: readonly R[]): R | null {
  let best: R | null = null;
  for (const row of components) {
    if (row.stats === undefined || row.stats.every((stat) => stat.total === 0)) continue;
    if (
      best === null ||
      row.utilisation > best.utilisation ||
      (row.utilisation === best.utilisation && row.id < best.id)
    ) {
      best = row;
    }
  }
  return best;
}

/** A sweep metric that names a model counter: `stats.<component id | kind | impl>.<counter>`. */
export interface StatMetric {
  /** A component id (`sip0.cube0.hbm`), a kind (`hbm_ctrl`) or an impl (`hbm_ctrl_v2`). */
  readonly selector: string;
  /** The counter's name (`row_hits`). */
  readonly name: string;
}

/** The prefix of a metric path that names a model counter. */
export const STAT_METRIC_PREFIX = "stats.";

const COUNTER_NAME = /^[a-z][a-z0-9_]*$/;

/**
 * A metric path as a {@link StatMetric}: null when it does not start with `stats.`; a string
 * saying what is wrong when it does but is not `stats.<component id | kind | impl>.<counter>`.
 */
export function parseStatMetric(path: string): StatMetric | string | null {
  if (!path.startsWith(STAT_METRIC_PREFIX)) return null;
  const rest = path.slice(STAT_METRIC_PREFIX.length);
  const dot = rest.lastIndexOf(".");
  const selector = dot < 0 ? "" : rest.slice(0, dot);
  const name = dot < 0 ? rest : rest.slice(dot + 1);
  if (selector === "" || !COUNTER_NAME.test(name)) {
    return `"${path}" is not a model counter: write stats.<component id | kind | impl>.<counter>, e.g. stats.hbm_ctrl.row_hits (summed over the hbm_ctrl components) or stats.sip0.cube0.hbm.act`;
  }
  return { selector, name };
}

/**
 * The counter `metric.name` summed over the components of `results` that `metric.selector`
 * names (by id, kind or impl) and that publish it; null when none does (a point whose model
 * keeps no such counter: hbm_ctrl_v1 has no row hits).
 */
export function statMetricValue(
  components: readonly (StatsRow & { readonly id: string })[],
  metric: StatMetric,
): number | null {
  let total: number | null = null;
  for (const row of components) {
    if (row.id !== metric.selector && row.kind !== metric.selector && row.impl !== metric.selector) continue;
    const stat = row.stats?.find((each) => each.name === metric.name);
    if (stat !== undefined) total = (total ?? 0) + stat.total;
  }
  return total;
}

/**
 * The counters each impl of `registry` declares, by the name a topology writes in `impl:`
 * (`hbm_ctrl_v2`: row_hits, ...; `kb-plugin-x:ctrl` for a plug-in's; none for most): how a
 * metric that names an impl's counter is checked against the impls of a run.
 */
export function implCounters(registry: ComponentRegistry): ReadonlyMap<string, readonly ModelStatInfo[]> {
  return new Map(registry.list().map((entry) => [entry.name, entry.definition.counters ?? []]));
}

/**
 * The counters each built-in impl declares (`implCounters` of the built-ins): how a sweep spec's
 * `stats.<impl>.<counter>` is checked before anything runs (its plug-ins are not loaded yet).
 */
export const BUILTIN_COUNTERS: ReadonlyMap<string, readonly ModelStatInfo[]> = implCounters(
  defaultRegistry(),
);
