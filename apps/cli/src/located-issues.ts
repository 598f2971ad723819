import { formatIssue, type LocatedIssue } from "@kb/topology";

/** The located issues of a topology validation error (`locatedIssuesOf` of @kb/topology). */
export { locatedIssuesOf } from "@kb/topology";

/** A topology warning as `kb topology validate` and `kb run` print it (a line, no newline). */
export function formatWarning(warning: LocatedIssue): string {
  return `warning: ${formatIssue(warning)}`;
}
