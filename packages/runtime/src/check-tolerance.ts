import { TOLERANCE_NORMS, type Tolerance } from "@kb/data-executor";
import { KbError } from "@kb/errors";
import * as z from "zod";
import type { BenchOutcome } from "./bench.js";

// A bench check's own tolerance (BenchCheck.tolerance): its schema and the located error for a bad one.

/** What a bench check may state of its tolerance; each field left out keeps the dtype's default. */
export type CheckTolerance = Partial<Tolerance>;

const bound = (field: string) =>
  z
    .number({ error: `${field}: must be a finite number >= 0` })
    .min(0, { error: `${field}: must be a finite number >= 0` })
    .optional();

/** The schema of {@link CheckTolerance}: `rtol` and `atol` finite numbers >= 0, `norm` a known one, no other key. */
export const checkToleranceSchema = z.strictObject(
  {
    rtol: bound("rtol").describe("Relative tolerance, a multiple of |expected| (or of max|expected|)."),
    atol: bound("atol").describe("Absolute tolerance, in the values' own units."),
    norm: z
      .enum(TOLERANCE_NORMS, {
        error: `norm: must be ${TOLERANCE_NORMS.map((name) => `"${name}"`).join(" or ")}`,
      })
      .optional()
      .describe(
        'What rtol multiplies: each |expected| ("elementwise", default) or max|expected| ("relative-to-max").',
      ),
  },
  { error: "must be an object { rtol?, atol?, norm? }" },
);

/**
 * Checks the `tolerance` of each of `outcome`'s checks against {@link checkToleranceSchema}.
 * Throws `RUNTIME_INVALID` for the first bad one, located at the bench's `file` when known and
 * naming the bench (when given), the check and the field: `benches/x.ts: bench "x", check "y":
 * tolerance.rtol: must be a finite number >= 0, got -1.`
 */
export function checkOutcomeTolerances(
  outcome: BenchOutcome | undefined,
  bench?: string,
  file?: string,
): void {
  for (const [name, check] of Object.entries(outcome?.check ?? {})) {
    const tolerance = (check as { tolerance?: unknown } | undefined)?.tolerance;
    if (tolerance === undefined) continue;
    const parsed = checkToleranceSchema.safeParse(tolerance);
    if (parsed.success) continue;
    const issue = parsed.error.issues[0] as z.core.$ZodIssue;
    const what = issueText(issue, tolerance);
    throw new KbError(
      "RUNTIME_INVALID",
      `${bench === undefined ? "" : `bench "${bench}", `}check "${name}": ${what}. A check's tolerance is { rtol?, atol?, norm? }: rtol and atol numbers >= 0, norm "elementwise" or "relative-to-max"; leave it out for the dtype's default (docs/verification.md).`,
      file === undefined ? {} : { context: { file } },
    );
  }
}

/** `tolerance.rtol: must be ..., got -1`, `tolerance: unknown key "rtl" (...)` or `tolerance: must be an object ..., got 0.01`. */
function issueText(issue: z.core.$ZodIssue, tolerance: unknown): string {
  if (issue.code === "unrecognized_keys") {
    const keys = issue.keys.map((key) => `"${key}"`).join(", ");
    return `tolerance: unknown key${issue.keys.length === 1 ? "" : "s"} ${keys} (its keys: ${Object.keys(checkToleranceSchema.shape).join(", ")})`;
  }
  const field = issue.path[0];
  if (field === undefined) return `tolerance: ${issue.message}, got ${describe(tolerance)}`;
  const value = (tolerance as Record<PropertyKey, unknown>)[field as PropertyKey];
  return `tolerance.${String(field)}: ${issue.message.replace(/^\w+: /, "")}, got ${describe(value)}`;
}

function describe(value: unknown): string {
  return typeof value === "string"
    ? JSON.stringify(value)
    : Array.isArray(value)
      ? "an array"
      : String(value);
}
