import { shownMaxErrors, TOLERANCE_NORMS, type VerifyReport } from "@kb/data-executor";
import * as z from "zod";
import type { RunResults } from "./results.js";

// The verification part of the results: its non-finite schemas and the JSON form of a report.

/** A non-finite value in JSON, which has no NaN or Infinity. */
export const nonFiniteValue = z.enum(["NaN", "Inf", "-Inf"]);

/** An error maximum as the verify tables show it: a number, or "NaN" / "Inf" where it is not finite. */
export const shownError = z.union([z.number(), nonFiniteValue]);

/** The fields of a verification output that say which tolerance was used (beside rtol and atol). */
export const toleranceFields = {
  norm: z
    .enum(TOLERANCE_NORMS)
    .optional()
    .describe(
      'What rtol multiplies: each |expected| ("elementwise") or referenceMaxAbs ("relative-to-max"); absent in results written before norms.',
    ),
  toleranceFrom: z
    .enum(["dtype", "check"])
    .optional()
    .describe(
      '"dtype": the default tolerance of the output\'s dtype; "check": the bench check\'s own tolerance.',
    ),
  referenceMaxAbs: z
    .number()
    .nullable()
    .optional()
    .describe(
      "The reference's largest finite |expected| (the relative-to-max scale); null when not compared.",
    ),
  maxAbsErrorShown: shownError
    .optional()
    .describe(
      'maxAbsError as the verify table shows it: "NaN" when an element has a NaN (output or reference) and no error is infinite, "Inf" when one is.',
    ),
  maxRelErrorShown: shownError
    .optional()
    .describe("maxRelError as the verify table shows it, as maxAbsErrorShown."),
};

/** NaN / +Inf / -Inf counts of a tensor and its first non-finite element. */
export const nonFiniteCounts = z.object({
  nan: z.number().int().describe("NaN elements."),
  posInf: z.number().int().describe("+Infinity elements."),
  negInf: z.number().int().describe("-Infinity elements."),
  first: z
    .object({ index: z.array(z.number()), value: nonFiniteValue })
    .nullable()
    .describe("The first non-finite element in row-major order, or null when every element is finite."),
});

/**
 * The JSON form of a verification report: non-finite numbers become null, except that the
 * non-finite counts' values and `firstNonFinite.value` are `"NaN"`, `"Inf"` or `"-Inf"`.
 */
export function verificationJson(report: VerifyReport): NonNullable<RunResults["verification"]> {
  const finite = (value: number) => (Number.isFinite(value) ? value : null);
  const origin = report.firstNonFinite;
  return {
    pass: report.pass,
    outputs: report.outputs.map((output) => {
      const compared = output.problem === undefined;
      const shown = shownMaxErrors(output);
      return {
        name: output.name,
        dtype: output.dtype,
        shape: [...output.shape],
        rtol: output.tolerance.rtol,
        atol: output.tolerance.atol,
        norm: output.tolerance.norm,
        toleranceFrom: output.tolerance.from,
        referenceMaxAbs: finite(output.referenceMaxAbs),
        maxAbsError: finite(output.maxAbsError),
        maxRelError: finite(output.maxRelError),
        ...(compared
          ? { maxAbsErrorShown: shownValue(shown.abs), maxRelErrorShown: shownValue(shown.rel) }
          : {}),
        mismatches: output.mismatches,
        firstMismatch:
          output.firstMismatch === null
            ? null
            : {
                index: [...output.firstMismatch.index],
                actual: finite(output.firstMismatch.actual),
                expected: finite(output.firstMismatch.expected),
              },
        actualNonFinite: nonFiniteJson(output.actualNonFinite),
        referenceNonFinite: nonFiniteJson(output.referenceNonFinite),
        pass: output.pass,
        ...(output.problem !== undefined ? { problem: output.problem } : {}),
      };
    }),
    ...(origin === undefined
      ? {}
      : {
          firstNonFinite:
            origin === null
              ? null
              : {
                  id: origin.id,
                  opName: origin.opName,
                  opKind: origin.opKind,
                  componentId: origin.componentId,
                  tStartNs: origin.tStartNs,
                  dst: origin.dst,
                  index: origin.index,
                  value: nonFiniteName(origin.value),
                  inputNonFinite: origin.inputNonFinite,
                },
        }),
  };
}

type NonFiniteCounts = VerifyReport["outputs"][number]["actualNonFinite"];

function nonFiniteJson(counts: NonFiniteCounts): z.infer<typeof nonFiniteCounts> {
  return {
    nan: counts.nan,
    posInf: counts.posInf,
    negInf: counts.negInf,
    first:
      counts.first === null
        ? null
        : { index: [...counts.first.index], value: nonFiniteName(counts.first.value) },
  };
}

function shownValue(value: number): z.infer<typeof shownError> {
  return Number.isFinite(value) ? value : nonFiniteName(value);
}

function nonFiniteName(value: number): z.infer<typeof nonFiniteValue> {
  return Number.isNaN(value) ? "NaN" : value > 0 ? "Inf" : "-Inf";
}
