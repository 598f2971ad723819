import { isKbError } from "@kb/errors";
import type { LocatedIssue } from "@kb/topology";

/**
 * The located issues of a topology validation error, or undefined for any other error.
 *
 * Checked by shape, not with `instanceof YamlValidationError`: the built `@kb/topology` and
 * `@kb/topology/node` entries each carry their own copy of that class, so an error thrown by
 * `loadTopologyFile` is not an instance of the class exported by `@kb/topology`. `KbError` comes
 * from the one `@kb/errors` module and is safe to test.
 */
export function locatedIssuesOf(error: unknown): readonly LocatedIssue[] | undefined {
  if (!isKbError(error) || (error.code !== "TOPOLOGY_YAML_SYNTAX" && error.code !== "TOPOLOGY_INVALID")) {
    return undefined;
  }
  const issues = (error as { issues?: unknown }).issues;
  return Array.isArray(issues) ? (issues as readonly LocatedIssue[]) : undefined;
}
