import { withoutFloatNoise } from "@kb/errors";
import { parseStatMetric, type StatsRow, statMetricValue } from "@kb/runtime";
import * as z from "zod";
import type { AxisValues } from "./designs.js";
import { metricPathFields } from "./field-paths.js";

/** A cell of the table: a metric's value (null when the results have no such field). */
export type MetricValue = number | string | boolean | null;

/** One row of a sweep's results table: one point, finished. */
export const sweepRowSchema = z.object({
  point: z.number().int().min(0).describe("The point's position in the design."),
  key: z.string().describe("The point's key (bench digest and inputs): how a resumed sweep finds it."),
  status: z.enum(["ok", "failed"]),
  reason: z
    .string()
    .nullable()
    .describe("Why it failed (error, out of memory, timeout, crash); null when ok."),
  digest: z
    .string()
    .nullable()
    .describe("Its run's manifest digest (RunResults.manifest.digest); null when failed before results."),
  values: z.record(z.string(), z.unknown()).describe("The axis values, by axis name."),
  metrics: z
    .record(z.string(), z.union([z.number(), z.string(), z.boolean(), z.null()]))
    .describe("The spec's metrics, by name."),
});

/** One row of a sweep's results table. */
export type SweepRow = z.infer<typeof sweepRowSchema>;

/**
 * The value at `path` in a results JSON: dot-separated fields and [n] indices
 * (`achieved.gemmFraction`, `launches[0].endNs`, `report.rows[2][5]`). A missing field (or one
 * the value only inherits, such as `constructor`) is null; a list or object is kept as its JSON
 * text; a number without the float noise of sums (12 significant digits: `94045.55`, not
 * `94045.54999999997`). `stats.<component id | kind | impl>.<counter>` is a model counter (`components[].stats`)
 * summed over the components named, null when none publishes it.
 */
export function metricAt(results: unknown, path: string): MetricValue {
  const stat = parseStatMetric(path);
  if (stat !== null && typeof stat !== "string") {
    const components = (results as { components?: unknown } | null)?.components;
    return Array.isArray(components) ? statMetricValue(components as StatsRow[], stat) : null;
  }
  let node: unknown = results;
  for (const part of metricPathFields(path)) {
    const index = /^\[(\d+)\]$/.exec(part);
    const key = index === null ? part : Number(index[1]);
    // Own fields only: a results JSON is data, its prototype's fields are not its values.
    if (node === null || typeof node !== "object" || !Object.hasOwn(node, key)) return null;
    node = (node as Record<string | number, unknown>)[key];
  }
  if (node === undefined || node === null) return null;
  if (typeof node === "number") return withoutFloatNoise(node);
  if (typeof node === "string" || typeof node === "boolean") return node;
  return JSON.stringify(node);
}

/** The spec's metrics read from one results JSON. */
export function metricsOf(
  results: unknown,
  metrics: Readonly<Record<string, string>>,
): Record<string, MetricValue> {
  return Object.fromEntries(Object.entries(metrics).map(([name, path]) => [name, metricAt(results, path)]));
}

/** The columns of a sweep's CSV: the point, its status, its axes, its metrics, then its identity. */
export function csvHeader(axes: readonly string[], metrics: readonly string[]): string {
  return csvLine(["point", "status", ...axes, ...metrics, "digest", "key", "reason"]);
}

/** A row as a CSV line (with its newline), columns as {@link csvHeader} orders them. */
export function csvRow(row: SweepRow, axes: readonly string[], metrics: readonly string[]): string {
  return csvLine([
    row.point,
    row.status,
    ...axes.map((name) => row.values[name]),
    ...metrics.map((name) => row.metrics[name] ?? null),
    row.digest,
    row.key,
    row.reason,
  ]);
}

/** A row as a JSONL line (with its newline). */
export function jsonlRow(row: SweepRow): string {
  return `${JSON.stringify(row)}\n`;
}

/** RFC 4180 cells: a cell with a comma, quote or line break is quoted; lists and objects as JSON. */
function csvLine(cells: readonly unknown[]): string {
  return `${cells.map(csvCell).join(",")}\n`;
}

/** What a spreadsheet reads as the start of a formula (OWASP's CSV injection list). */
const FORMULA_START = /^[=+\-@\t\r]/;

function csvCell(value: unknown): string {
  if (value === null || value === undefined) return "";
  // Text from a spec or an error (an axis value, a reason) is data: a leading ' keeps a
  // spreadsheet from running it as a formula. Numbers, negative ones too, stay numbers.
  const text =
    typeof value === "string" ? (FORMULA_START.test(value) ? `'${value}` : value) : JSON.stringify(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/**
 * A point's axis values as short text for progress lines: `hbm=hbm3 pes=[2,4]`. A string with a
 * control character (an escape sequence that would drive the terminal) is printed as JSON,
 * escaped: a spec's values are data, not terminal commands.
 */
export function describeValues(values: AxisValues): string {
  return Object.entries(values)
    .map(([name, value]) => {
      const plain = typeof value === "string" && !CONTROL.test(value);
      return `${name}=${plain ? value : JSON.stringify(value)}`;
    })
    .join(" ");
}

/** C0 and C1 control characters and DEL: what starts a terminal's escape sequences. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching them is the point.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
