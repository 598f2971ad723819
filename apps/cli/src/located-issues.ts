import { isKbError } from "@kb/errors";
import { formatIssue, type LocatedIssue } from "@kb/topology";

/**
 * The located issues of a topology validation error, or undefined for any other error.
 *
 * Checked by shape, not with `instanceof YamlValidationError`: the built `@kb/topology` and
 * `@kb/topology/node` entries each carry their own copy of that class, so an error thrown by
 * `loadTopologyFile` is not an instance of the class exported by `@kb/topology`. `KbError` comes
 * from the one `@kb/errors` module and is safe to test.
 */
export function locatedIssuesOf(error: unknown): readonly LocatedIssue[] | undefined {
  if (!isKbError(error) || !LOCATED_CODES.has(error.code)) return undefined;
  const issues = (error as { issues?: unknown }).issues;
  // A ComponentParamsError has `issues` too, by node id and not located: not these.
  if (!Array.isArray(issues) || !issues.every(isLocated)) return undefined;
  return issues as readonly LocatedIssue[];
}

/** A topology warning as `kb topology validate` and `kb run` print it (a line, no newline). */
export function formatWarning(warning: LocatedIssue): string {
  return `warning: ${formatIssue(warning)}`;
}

/** The codes of `YamlValidationError` (topology validation, and machine building from a file). */
const LOCATED_CODES: ReadonlySet<string> = new Set([
  "TOPOLOGY_YAML_SYNTAX",
  "TOPOLOGY_INVALID",
  "COMPONENT_UNKNOWN_IMPL",
  "COMPONENT_INVALID_PARAMS",
]);

function isLocated(issue: unknown): boolean {
  const located = issue as Partial<LocatedIssue> | null;
  return located !== null && typeof located.file === "string" && typeof located.line === "number";
}
