import { KbError } from "@kb/errors";
import { BUILTIN_COUNTERS, parseStatMetric } from "@kb/runtime";
import { isPrototypeKey, locateYamlPath, prototypeKeyMessage, validateYaml } from "@kb/topology";
import * as z from "zod";
import { parseConstraint } from "./constraint.js";
import { designSizeProblem } from "./designs.js";
import { energyMetricProblem } from "./energy-metrics.js";
import { metricPathFields, targetPathFields } from "./field-paths.js";
import { SWEEP_LIMITS } from "./limits.js";

// The sweep spec: a base run (bench, topology, params, plug-ins), axes that change it, a design
// that picks points from the axes, constraints that skip invalid points, and the metrics each
// row of the results table keeps.

const AXIS_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Where an axis writes its value: `topology.<path>`, `topology.overrides[]`, `params.<path>` or `plugins`. */
const TARGET = /^(topology(\.[A-Za-z0-9_$]+)+|topology\.overrides\[\]|params(\.[A-Za-z0-9_]+)+|plugins)$/;

/** A zod check that no field of a dotted path (split by `split`) is a prototype key. */
function noPrototypeKey(split: (path: string) => readonly string[]) {
  return (path: string, context: z.RefinementCtx) => {
    const key = split(path).find(isPrototypeKey);
    if (key !== undefined) context.addIssue({ code: "custom", message: prototypeKeyMessage(key) });
  };
}

/**
 * A metric that names a model counter (`stats.<component id | kind | impl>.<counter>`) is written
 * that way, and a built-in impl's counter is one it publishes (a kind's, a component's or a
 * plug-in impl's are known only after a run: null where none publishes it).
 */
function knownStatMetric(path: string, context: z.RefinementCtx): void {
  const stat = parseStatMetric(path);
  if (stat === null) return;
  if (typeof stat === "string") {
    context.addIssue({ code: "custom", message: stat });
    return;
  }
  const counters = BUILTIN_COUNTERS.get(stat.selector);
  if (counters === undefined || counters.some((counter) => counter.name === stat.name)) return;
  const names = counters.map((counter) => counter.name);
  context.addIssue({
    code: "custom",
    message:
      names.length === 0
        ? `${stat.selector} publishes no counters (kb components list shows what each impl publishes)`
        : `${stat.selector} publishes no counter "${stat.name}"; it publishes ${names.join(", ")}`,
  });
}

/** A metric into the results' energy names one of its fields (ENERGY_METRIC_PATHS). */
function knownEnergyMetric(path: string, context: z.RefinementCtx): void {
  const problem = energyMetricProblem(metricPathFields(path));
  if (problem !== null) context.addIssue({ code: "custom", message: problem });
}

/**
 * A number in [min, max] (above `min` when `above`), whole when `integer`; out of range, an issue
 * that gives the allowed range and why it ends there.
 */
function bounded(options: {
  readonly min: number;
  readonly max: number;
  readonly above?: boolean;
  readonly integer?: boolean;
  readonly unit?: string;
  readonly why?: string;
}) {
  const { min, max, above = false, integer = false, unit = "", why = "" } = options;
  const range = `${above ? "(" : "["}${min}, ${max}]${unit === "" ? "" : ` ${unit}`}`;
  return z.number().superRefine((value, context) => {
    const inRange = (above ? value > min : value >= min) && value <= max;
    if (!inRange || (integer && !Number.isInteger(value))) {
      context.addIssue({
        code: "custom",
        message: `expected ${integer ? "a whole number" : "a number"} in ${range}${why === "" ? "" : ` (${why})`}, got ${value}`,
      });
    }
  });
}

const seedSchema = bounded({
  min: 0,
  max: SWEEP_LIMITS.maxSeed,
  integer: true,
  why: "a 32-bit seed",
}).default(1);

const designPointsSchema = bounded({
  min: 1,
  max: SWEEP_LIMITS.maxDesignPoints,
  integer: true,
  why: "each point is planned in memory and run as a process",
});

const targetSchema = z
  .string()
  .regex(
    TARGET,
    "expected topology.<path> (cube.hbm.preset, pe_template.components.pe_gemm.impl), topology.overrides[] (appends an override), params.<name> or plugins",
  )
  .superRefine(noPrototypeKey(targetPathFields));

const rangeSchema = z
  .strictObject({
    min: z.number().describe("Smallest value."),
    max: z.number().describe("Largest value."),
    step: z
      .number()
      .positive()
      .optional()
      .describe("Values are min + k * step (a grid needs it); absent: any value in [min, max]."),
    integer: z.boolean().default(false).describe("Round drawn values to whole numbers."),
  })
  .refine((range) => range.max >= range.min, { message: "max must be >= min" })
  .refine((range) => Number.isFinite(range.max - range.min), {
    message: "max - min must be a finite number (the range's width); narrow the range",
  });

const axisSchema = z
  .strictObject({
    path: z
      .union([targetSchema, z.array(targetSchema).min(1)])
      .describe(
        "Where the value goes; a list of paths takes a list of values each (noc rows and cols together).",
      ),
    values: z.array(z.unknown()).min(1).optional().describe("The values the axis takes (categorical)."),
    range: rangeSchema.optional().describe("A numeric axis: a range instead of values."),
  })
  .refine((axis) => (axis.values === undefined) !== (axis.range === undefined), {
    message: "give an axis either values: [...] or range: { min, max, step }",
  });

const designSchema = z
  .discriminatedUnion("kind", [
    z.strictObject({ kind: z.literal("grid") }),
    z.strictObject({
      kind: z.literal("random"),
      points: designPointsSchema.describe("Points to draw (duplicates are dropped)."),
      seed: seedSchema,
    }),
    z.strictObject({
      kind: z.literal("lhs"),
      points: designPointsSchema.describe("Points: each axis is cut into this many strata."),
      seed: seedSchema,
    }),
  ])
  .default({ kind: "grid" });

const runSchema = z
  .strictObject({
    verify: z
      .boolean()
      .default(false)
      .describe("Run phase 2 and check each point's outputs (kb run --verify)."),
    maxEvents: bounded({ min: 1, max: SWEEP_LIMITS.maxEvents, integer: true })
      .optional()
      .describe("kb run --max-events for each point."),
    maxSimTimeNs: bounded({ min: 0, max: SWEEP_LIMITS.maxSimTimeNs, above: true, unit: "ns" })
      .optional()
      .describe("kb run --max-sim-time for each point."),
    maxStallCalls: bounded({ min: 1, max: SWEEP_LIMITS.maxEvents, integer: true })
      .optional()
      .describe(
        "kb run --max-stall-calls for each point: tl calls in a row without progress of the machine before a point stops (default kb run's).",
      ),
    memoryMb: bounded({
      min: SWEEP_LIMITS.minMemoryMb,
      max: SWEEP_LIMITS.maxMemoryMb,
      integer: true,
      unit: "MB",
    })
      .default(4096)
      .describe("Heap limit of each point's process (node --max-old-space-size), MB."),
    timeoutS: bounded({
      min: 0,
      max: SWEEP_LIMITS.maxTimeoutS,
      above: true,
      unit: "s",
      why: "about 24.8 days, the longest timer Node can set",
    })
      .optional()
      .describe("Wall time after which a point's process is killed and the point recorded as failed."),
    retries: z
      .number()
      .int()
      .min(0)
      .max(10)
      .default(0)
      .describe(
        "Times a failed point is run again before its failure is recorded (a crash of the machine, not of the model).",
      ),
  })
  .prefault({});

/** The zod schema of a sweep spec file (`kb sweep SPEC.yaml`). */
export const sweepSpecSchema = z.strictObject({
  name: z
    .string()
    .regex(/^[A-Za-z0-9_.-]+$/, "letters, digits, _ . - only (it names the results folder)")
    .refine((name) => name !== "." && name !== "..", {
      message: "not . or .. (it names the results folder, results/NAME beside the spec)",
    }),
  description: z.string().optional(),
  bench: z.string().min(1).describe("Bench name (benches/NAME.ts) or path, from the spec's folder."),
  topology: z
    .string()
    .min(1)
    .default("default")
    .describe("Base topology: a name or a path, from the spec's folder."),
  params: z
    .record(z.string().regex(/^[^=]+$/, "a param's name has no = (kb run --param NAME=VALUE)"), z.unknown())
    .default({})
    .describe("Base bench params."),
  plugins: z.array(z.string().min(1)).default([]).describe("Plug-ins every point loads."),
  set: z
    .record(targetSchema, z.unknown())
    .default({})
    .describe(
      "Changes every point gets before its axes: path -> value (topology.cube.hbm.impl: hbm_ctrl_v2).",
    ),
  axes: z
    .record(z.string().regex(AXIS_NAME, "axis names are identifiers (constraints use them)"), axisSchema)
    .refine((axes) => Object.keys(axes).length > 0, { message: "a sweep needs at least one axis" })
    .describe("What changes from point to point, in order (the grid's first axis changes slowest)."),
  design: designSchema,
  constraints: z
    .array(z.string().min(1))
    .default([])
    .describe("Expressions over the axis names, params and topology; a point runs only when all are true."),
  metrics: z
    .record(
      z.string(),
      z
        .string()
        .min(1)
        .superRefine(noPrototypeKey(metricPathFields))
        .superRefine(knownStatMetric)
        .superRefine(knownEnergyMetric),
    )
    .default({ simTimeNs: "simTimeNs" })
    .describe(
      "Columns of the table: name -> path into the results JSON (achieved.gemmFraction, launches[0].endNs), or a model counter: stats.<component id | kind | impl>.<counter> summed over the components named (stats.hbm_ctrl.row_hits), or the run's energy: energy.totalJ, energy.averagePowerW, energy.edpJs, energy.jPerToken, energy.byKind.<kind>.totalJ, launches[n].energy.totalJ (docs/energy.md).",
    ),
  run: runSchema,
});

/** A sweep spec with its defaults filled in. */
export type SweepSpec = z.output<typeof sweepSpecSchema>;
/** One axis of a spec. */
export type SweepAxis = SweepSpec["axes"][string];
/** A spec's design. */
export type SweepDesign = SweepSpec["design"];

/**
 * Parses and validates a sweep spec (YAML text). Problems are reported with their
 * `file:line:col` (a `YamlValidationError`), limits included (`SWEEP_LIMITS`); constraints that
 * do not parse, grid axes without a step and a design of more than
 * `SWEEP_LIMITS.maxDesignPoints` points (counted, not made) are `SWEEP_INVALID` errors naming
 * the axis, constraint or design.
 */
export function parseSweepSpec(text: string, file = "<sweep spec>"): SweepSpec {
  const spec = validateYaml(sweepSpecSchema, text, file);
  for (const [index, source] of spec.constraints.entries()) {
    try {
      parseConstraint(source);
    } catch (error) {
      throw new KbError(
        "SWEEP_INVALID",
        `${file}: constraints[${index}] "${source}": ${error instanceof Error ? error.message : String(error)}`,
        { context: { file }, cause: error },
      );
    }
  }
  for (const [name, axis] of Object.entries(spec.axes)) {
    const paths = Array.isArray(axis.path) ? axis.path : [axis.path];
    if (paths.length > 1) {
      const bad = (axis.values ?? [undefined]).find(
        (value) => !Array.isArray(value) || value.length !== paths.length,
      );
      if (bad !== undefined || axis.range !== undefined) {
        throw new KbError(
          "SWEEP_INVALID",
          `${file}: axes.${name}: its path lists ${paths.length} places, so each of its values must be a list of ${paths.length} (found ${JSON.stringify(bad ?? axis.range)}).`,
          { context: { file } },
        );
      }
    }
    if (spec.design.kind === "grid" && axis.range !== undefined && axis.range.step === undefined) {
      throw new KbError(
        "SWEEP_INVALID",
        `${file}: axes.${name}: a grid needs the values of a range: add range.step, list values: [...], or use design: { kind: lhs | random, points: N }.`,
        { context: { file } },
      );
    }
  }
  const tooLarge = designSizeProblem(spec.axes, spec.design);
  if (tooLarge !== undefined) {
    const { line, col } = locateYamlPath(text, [spec.design.kind === "grid" ? "axes" : "design"]);
    throw new KbError("SWEEP_INVALID", tooLarge, {
      context: { file, line, col },
    });
  }
  return spec;
}
