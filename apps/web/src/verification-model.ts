import { formatError, formatNonFinite, formatTolerance } from "@kb/data-executor";
import type { RunResults } from "@kb/runtime";

// The cells of kb web's verify table (tables.ts draws them), as `kb run --verify` prints them:
// the same number, non-finite and tolerance formats (those of @kb/data-executor's verify table).

type VerificationOutput = NonNullable<RunResults["verification"]>["outputs"][number];

/** One output's row of the verify table, as text. */
export interface VerificationRow {
  readonly name: string;
  readonly dtype: string;
  readonly shape: string;
  /** The output's NaN / Inf / -Inf counts, `0`, or `-` (not compared, or results older than the counts). */
  readonly nonFinite: string;
  /** NaN / Inf where the error is not finite (never 0 beside a NaN), `-` when not compared. */
  readonly maxAbsError: string;
  readonly maxRelError: string;
  readonly mismatches: string;
  readonly firstMismatch: string;
  /** The tolerance used, its norm, and `(bench's)` when the check stated it. */
  readonly tolerance: string;
  readonly pass: boolean;
  readonly problem: string;
}

/** The verify table's rows for a results file's `verification.outputs`. */
export function verificationRows(outputs: readonly VerificationOutput[]): VerificationRow[] {
  return outputs.map((output) => {
    const compared = output.problem === undefined;
    const errors = shownErrors(output);
    const first = output.firstMismatch;
    return {
      name: output.name,
      dtype: output.dtype,
      shape: `[${output.shape.join(", ")}]`,
      nonFinite:
        compared && output.actualNonFinite !== undefined ? formatNonFinite(output.actualNonFinite) : "-",
      maxAbsError: compared ? errors.abs : "-",
      maxRelError: compared ? errors.rel : "-",
      mismatches: `${output.mismatches} of ${output.shape.reduce((product, size) => product * size, 1)}`,
      firstMismatch:
        first === null
          ? "-"
          : `[${first.index.join(", ")}]: ${valueText(first.actual, first.index, output.actualNonFinite)} vs ${valueText(first.expected, first.index, output.referenceNonFinite)}`,
      tolerance: formatTolerance(
        {
          rtol: output.rtol,
          atol: output.atol,
          ...(output.norm === undefined ? {} : { norm: output.norm }),
          ...(output.toleranceFrom === undefined ? {} : { from: output.toleranceFrom }),
        },
        output.referenceMaxAbs,
      ),
      pass: output.pass,
      problem: output.problem ?? "",
    };
  });
}

/**
 * The error maxima as text: the results' shown maxima (what `kb run --verify` printed), or for
 * results written before them the same rule from the counts: NaN when an element has a NaN and
 * the error is finite, Inf when the error is null (not finite) without a NaN.
 */
function shownErrors(output: VerificationOutput): { abs: string; rel: string } {
  const nan = (output.actualNonFinite?.nan ?? 0) > 0 || (output.referenceNonFinite?.nan ?? 0) > 0;
  const text = (shown: number | string | undefined, max: number | null): string => {
    if (typeof shown === "number") return formatError(shown);
    if (shown !== undefined) return shown;
    if (max === null) return nan ? "NaN" : "Inf";
    return nan ? "NaN" : formatError(max);
  };
  return {
    abs: text(output.maxAbsErrorShown, output.maxAbsError),
    rel: text(output.maxRelErrorShown, output.maxRelError),
  };
}

/**
 * A first-mismatch value: JSON has null for a non-finite one; when it is also the first
 * non-finite element of its tensor, the counts say which (NaN, Inf, -Inf).
 */
function valueText(
  value: number | null,
  index: readonly number[],
  counts: VerificationOutput["actualNonFinite"],
): string {
  if (value !== null) return String(value);
  const first = counts?.first;
  const same = first != null && first.index.join(",") === index.join(",");
  return same ? first.value : "not finite";
}
