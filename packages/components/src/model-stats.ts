import { KbError } from "@kb/errors";

/**
 * One counter a timing model publishes (its `stats()`): row hits of an HBM controller, credit
 * stalls of a router, ... The framework copies a model's counters into `components[].stats` of
 * the run results, where `kb run`, `kb web` and a sweep's metrics read them.
 *
 * Like Ramulator's `register_stat` or SST's `registerStatistic`: a name, a unit, a sentence, and
 * the value, in total and (optionally) per port or lane.
 */
export interface ModelStat {
  /** snake_case, unique within the model (`"row_hits"`, `"credit_stalls"`). */
  readonly name: string;
  /** What one unit counts: `"count"`, `"ns"`, `"bytes"`, `"cycles"`, ... */
  readonly unit: string;
  /** One sentence: what is counted (shown by `kb components list` and `kb web`). */
  readonly description: string;
  /** The value over the whole model (the sum of `perPort` when both are given). */
  readonly total: number;
  /** The value per port or lane (an HBM pseudo-channel, a router input), in port order. */
  readonly perPort?: readonly number[];
}

/**
 * A counter a model declares on its definition (`counters:` of `defineMemoryModel`,
 * `defineStageEngine`, `defineComponent`): its name, unit and sentence without a value, so
 * `kb components list` documents what the impl publishes before anything runs.
 */
export type ModelStatInfo = Pick<ModelStat, "name" | "unit" | "description">;

const STAT_NAME = /^[a-z][a-z0-9_]*$/;

/**
 * Checks what a model's `stats()` returned and copies it (so a later change of the model's own
 * arrays cannot change a report): an array of {@link ModelStat}s with snake_case names unique in
 * the model, a unit and a description, a finite `total` and, when given, finite `perPort` values.
 * Throws `MACHINE_INVARIANT` naming the component (`where`) and the stat otherwise.
 */
export function checkModelStats(value: unknown, where: string, nodeId: string): ModelStat[] {
  const fail = (what: string): never => {
    throw new KbError(
      "MACHINE_INVARIANT",
      `${where}: stats() ${what}; it must return [{ name, unit, description, total, perPort? }, ...] with snake_case names unique in the model and finite numbers.`,
      { context: { nodeId } },
    );
  };
  if (!Array.isArray(value)) return fail(`returned ${describe(value)}, not an array`);
  const seen = new Set<string>();
  return value.map((item: unknown, index) => {
    const stat = item as Partial<ModelStat> | null;
    if (stat === null || typeof stat !== "object") return fail(`[${index}] is ${describe(item)}`);
    const { name, unit, description, total, perPort } = stat;
    if (typeof name !== "string" || !STAT_NAME.test(name)) {
      return fail(`[${index}].name is ${describe(name)}, not a snake_case name`);
    }
    if (seen.has(name)) fail(`names "${name}" twice`);
    seen.add(name);
    if (typeof unit !== "string" || unit === "") fail(`"${name}" has no unit`);
    if (typeof description !== "string" || description === "") fail(`"${name}" has no description`);
    if (typeof total !== "number" || !Number.isFinite(total)) fail(`"${name}" has total ${describe(total)}`);
    if (perPort !== undefined) {
      if (!Array.isArray(perPort)) fail(`"${name}" has perPort ${describe(perPort)}, not an array`);
      const bad = (perPort as unknown[]).findIndex((v) => typeof v !== "number" || !Number.isFinite(v));
      if (bad >= 0) fail(`"${name}" has perPort[${bad}] ${describe((perPort as unknown[])[bad])}`);
    }
    return {
      name: name as string,
      unit: unit as string,
      description: description as string,
      total: total as number,
      ...(perPort === undefined ? {} : { perPort: [...perPort] }),
    };
  });
}

function describe(value: unknown): string {
  if (typeof value === "number" || value === undefined) return String(value);
  return JSON.stringify(value) ?? String(value);
}
