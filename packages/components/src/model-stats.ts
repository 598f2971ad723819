import { KbError } from "@kb/errors";
import type { ModelStat } from "@kb/spec";

// The types are the contract (@kb/spec); the framework checks what a model's stats() returned.
export type { ModelStat, ModelStatInfo } from "@kb/spec";

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
