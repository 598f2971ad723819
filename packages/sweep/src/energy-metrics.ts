import { launchEnergySchema, runEnergySchema } from "@kb/runtime";
import type * as z from "zod";

// The energy paths a sweep metric may name (docs/energy.md, the `energy` block of kb run --json),
// read from the results schema: a misspelt one is an error where the spec is written, not a
// column of empty cells.

const runShape = (runEnergySchema.unwrap() as z.ZodObject).shape;
const RUN_FIELDS = Object.keys(runShape);
const LAUNCH_FIELDS = Object.keys(launchEnergySchema.shape);
const KIND_FIELDS = Object.keys(
  ((runShape.byKind as z.ZodRecord).valueType as z.ZodObject).shape as Record<string, unknown>,
);
const BUSIEST_FIELDS = Object.keys(
  ((runShape.busiest as z.ZodArray).element as z.ZodObject).shape as Record<string, unknown>,
);
/** The run's fields that are a number each (not the maps and the list). */
const RUN_NUMBERS = RUN_FIELDS.filter((field) => !["byKind", "busiest", "links"].includes(field));

/**
 * Every energy path a metric may name, for documents and messages: `energy.<field>`,
 * `energy.byKind.<kind>.<field>`, `energy.links.<cost>`, `energy.busiest[n].<field>` and
 * `launches[n].energy.<field>`.
 */
export const ENERGY_METRIC_PATHS: readonly string[] = [
  ...RUN_NUMBERS.map((field) => `energy.${field}`),
  `energy.byKind.<kind>.{${KIND_FIELDS.join(",")}}`,
  "energy.links.<cost>",
  `energy.busiest[n].{${BUSIEST_FIELDS.join(",")}}`,
  `launches[n].energy.{${LAUNCH_FIELDS.join(",")}}`,
];

const isIndex = (field: string | undefined) => field !== undefined && /^\[\d+\]$/.test(field);

/**
 * What is wrong with a metric path into the energy of the results (`fields` split as
 * metricPathFields splits it), or null when it names an energy field or is no energy path.
 */
export function energyMetricProblem(fields: readonly string[]): string | null {
  const [first, second] = fields;
  let rest: readonly string[];
  let allowed: readonly string[];
  let where: string;
  if (first === "energy") {
    rest = fields.slice(1);
    where = "energy";
    if (rest.length === 0) return null;
    const [field = "", third, fourth] = rest;
    if (field === "byKind") {
      if (third === undefined || fourth === undefined || rest.length > 3 || !KIND_FIELDS.includes(fourth)) {
        return `energy.byKind is by component kind: energy.byKind.<kind>.{${KIND_FIELDS.join(", ")}} (energy.byKind.hbm_ctrl.totalJ)`;
      }
      return null;
    }
    if (field === "links") {
      return rest.length === 2
        ? null
        : "energy.links is J per link cost: energy.links.<cost> (energy.links.ucie_pj_per_bit)";
    }
    if (field === "busiest") {
      if (isIndex(third) && fourth !== undefined && rest.length === 3 && BUSIEST_FIELDS.includes(fourth))
        return null;
      return `energy.busiest is a list, most first: energy.busiest[n].{${BUSIEST_FIELDS.join(", ")}}`;
    }
    allowed = RUN_NUMBERS;
  } else if (first === "launches" && isIndex(second) && fields[2] === "energy") {
    rest = fields.slice(3);
    where = `launches${second}.energy`;
    if (rest.length === 0) return null;
    allowed = LAUNCH_FIELDS;
  } else {
    return null;
  }
  const [field = ""] = rest;
  if (rest.length === 1 && allowed.includes(field)) return null;
  return `${where} has no field "${rest.join(".")}"; the energy paths a metric may name: ${ENERGY_METRIC_PATHS.join(", ")} (docs/energy.md)`;
}
