// The verify table (formatVerifyTable): the report of verify.ts as the text kb run --verify prints.
import { formatSimTime } from "@kb/errors";
import { formatShape } from "@kb/tensor";
import type { AppliedTolerance } from "./tolerance.js";
import { elementCount, type NonFiniteCounts, type OutputCheck, type VerifyReport } from "./verify.js";

/**
 * The report as an aligned text table, one row per output: output, dtype, shape, non-finite (the
 * output's NaN / Inf / -Inf counts and the first one's index, e.g. `32 NaN (first [0, 0])`, or
 * 0), max abs err, max rel err (NaN when an element's error is NaN, a NaN in the output or the
 * reference, and none is infinite; Inf when one is), mismatches (of the element
 * count), first mismatch (`[0, 3] actual NaN, expected 0.25`), tolerance (`rtol 0.001 atol 0.001`,
 * `rtol 0.01 x max|ref| 4, atol 0` for the relative-to-max norm, `exact`; `(bench's)` when the
 * check stated it rather than its dtype's default), and PASS or FAIL (with
 * the problem, if any). Then, for outputs that FAIL (matching infinities are no news):
 *
 * - a line per reference that holds non-finite values (`reference of out has 4 NaN (first [1, 0])`,
 *   with why that is suspicious);
 * - when such an output holds non-finite values and the report knows where they came from
 *   ({@link VerifyReport.firstNonFinite}), `first non-finite value: op 17 (log on
 *   sip0.cube0.pe3.pe_math at t=812 ns), NaN at element 0 of its output` (and that it was passed
 *   on from the host's data when its input held it), or that no op produced one (host data);
 *
 * and a final line such as `PASS: 2 of 2 outputs match` or `FAIL: 1 of 3 outputs do not match
 * (c)`. Every line ends with a newline, so the text can be written to a stream as is.
 */
export function formatVerifyTable(report: VerifyReport): string {
  const header = [
    "output",
    "dtype",
    "shape",
    "non-finite",
    "max abs err",
    "max rel err",
    "mismatches",
    "first mismatch",
    "tolerance",
    "result",
  ];
  const rightAligned = [false, false, false, false, true, true, true, false, false, false];
  const rows = report.outputs.map((check) => {
    const compared = check.problem === undefined;
    const first = check.firstMismatch;
    return [
      check.name,
      check.dtype,
      formatShape(check.shape),
      compared ? formatNonFinite(check.actualNonFinite) : "-",
      compared ? formatError(shownMaxErrors(check).abs) : "-",
      compared ? formatError(shownMaxErrors(check).rel) : "-",
      compared ? `${check.mismatches} of ${elementCount(check.shape)}` : "-",
      first === null
        ? "-"
        : `${formatShape(first.index)} actual ${formatValue(first.actual)}, expected ${formatValue(first.expected)}`,
      formatTolerance(check.tolerance, check.referenceMaxAbs),
      check.pass ? "PASS" : compared ? "FAIL" : `FAIL: ${check.problem}`,
    ];
  });
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => row[column]!.length)),
  );
  const lastColumn = header.length - 1;
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) =>
        column === lastColumn
          ? cell
          : rightAligned[column]
            ? cell.padStart(widths[column]!)
            : cell.padEnd(widths[column]!),
      )
      .join("  ");
  const lines = [line(header), line(widths.map((width) => "-".repeat(width))), ...rows.map(line)];
  // Notes for failed outputs only: matching infinities (a masked -Inf) are no news on PASS.
  const failedChecks = report.outputs.filter((check) => !check.pass);
  for (const check of failedChecks) {
    const counts = check.referenceNonFinite;
    if (counts.first === null) continue;
    lines.push(
      `reference of ${check.name} has ${formatNonFinite(counts)}: ${
        counts.nan > 0
          ? "suspicious, a NaN in a reference matches nothing (not even a NaN); check how the bench computes it"
          : "only the same infinity in the output matches it"
      }`,
    );
  }
  const origin = report.firstNonFinite;
  if (origin !== undefined && failedChecks.some((check) => check.actualNonFinite.first !== null)) {
    lines.push(
      origin === null
        ? "first non-finite value: no math or GEMM op produced one; it came from the host's data (copies only move values)"
        : `first non-finite value: op ${origin.id} (${origin.opName} on ${origin.componentId} at t=${formatSimTime(origin.tStartNs)} ns), ${formatValue(origin.value)} at element ${origin.index} of its output${
            origin.inputNonFinite
              ? ", passed on from its input: the host's data held it (no earlier op produced one)"
              : ""
          }`,
    );
  }
  // A large relative error next to PASS looks wrong: say where it comes from.
  for (const check of report.outputs) {
    const { rtol, atol } = check.tolerance;
    const elementwise = check.tolerance.norm === "elementwise";
    if (check.pass && check.problem === undefined && elementwise && check.maxRelError > rtol && rtol > 0) {
      lines.push(
        `${check.name}: max rel err ${formatError(check.maxRelError)} is above rtol ${rtol}, yet every element matches: it comes from elements whose expected value is near 0, where |actual - expected| <= atol + rtol x |expected| is held by atol (${atol}).${
          check.tolerance.from === "dtype"
            ? " If outputs this small are expected, the dtype's atol is loose for them: state the check's own tolerance (docs/verification.md)."
            : ""
        }`,
      );
    }
  }
  const failed = failedChecks.map((check) => check.name);
  const total = report.outputs.length;
  lines.push(
    failed.length === 0
      ? `PASS: ${total} of ${total} ${total === 1 ? "output matches" : "outputs match"}`
      : `FAIL: ${failed.length} of ${total} ${failed.length === 1 ? "output does" : "outputs do"} not match (${failed.join(", ")})`,
  );
  return `${lines.join("\n")}\n`;
}

/**
 * Non-finite counts as `3 NaN, 1 Inf, 2 -Inf (first [0, 2])`, kinds with no element left out; `0`
 * when none. Takes a report's counts or their JSON form (kb web's verify table uses it too).
 */
export function formatNonFinite(
  counts: Pick<NonFiniteCounts, "nan" | "posInf" | "negInf"> & {
    readonly first: { readonly index: readonly number[] } | null;
  },
): string {
  if (counts.first === null) return "0";
  const parts: string[] = [];
  if (counts.nan > 0) parts.push(`${counts.nan} NaN`);
  if (counts.posInf > 0) parts.push(`${counts.posInf} Inf`);
  if (counts.negInf > 0) parts.push(`${counts.negInf} -Inf`);
  return `${parts.join(", ")} (first ${formatShape(counts.first.index)})`;
}

/**
 * A check's error maxima as the verify tables show them (`kb run --verify`, kb web): NaN when an
 * element's error is NaN (a NaN in the output or the reference, which the report's maxima leave
 * out) and no error is infinite, so a NaN never sits beside a reassuring 0; the report's maximum
 * otherwise (Inf beats NaN: it says more).
 */
export function shownMaxErrors(check: OutputCheck): { readonly abs: number; readonly rel: number } {
  const nanError = check.actualNonFinite.nan > 0 || check.referenceNonFinite.nan > 0;
  const shown = (max: number) => (nanError && Number.isFinite(max) ? Number.NaN : max);
  return { abs: shown(check.maxAbsError), rel: shown(check.maxRelError) };
}

/** An error maximum: 0, three significant digits, Inf, or NaN (nothing measured); kb web's table uses it too. */
export function formatError(x: number): string {
  if (x === 0 || !Number.isFinite(x)) return formatValue(x);
  const magnitude = Math.abs(x);
  return magnitude >= 1e-3 && magnitude < 1e4 ? String(Number(x.toPrecision(3))) : x.toExponential(2);
}

/** An element value as JS prints it (exact: every dtype's values are doubles), Inf for infinities. */
function formatValue(x: number): string {
  if (x === Number.POSITIVE_INFINITY) return "Inf";
  if (x === Number.NEGATIVE_INFINITY) return "-Inf";
  return String(x);
}

/**
 * `rtol 0.001 atol 0.001` (elementwise), `rtol 0.01 x max|ref| 4, atol 0` (relative-to-max, with
 * the reference's max, `-` when unknown), or `exact`; ` (bench's)` after a tolerance the check
 * stated. A field left out (results JSON written before norms) reads as elementwise, the dtype's.
 */
export function formatTolerance(
  tolerance: Pick<AppliedTolerance, "rtol" | "atol"> & Partial<Pick<AppliedTolerance, "norm" | "from">>,
  referenceMaxAbs: number | null | undefined,
): string {
  const { rtol, atol } = tolerance;
  const text =
    rtol === 0 && atol === 0
      ? "exact"
      : tolerance.norm === "relative-to-max"
        ? `rtol ${rtol} x max|ref| ${typeof referenceMaxAbs === "number" && !Number.isNaN(referenceMaxAbs) ? formatValue(referenceMaxAbs) : "-"}, atol ${atol}`
        : `rtol ${rtol} atol ${atol}`;
  return tolerance.from === "check" ? `${text} (bench's)` : text;
}
