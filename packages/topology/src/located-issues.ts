import { isKbError } from "@kb/errors";
import type { LocatedIssue, YamlValidationCode } from "./yaml-validate.js";

/** The codes of a `YamlValidationError` (topology validation, and machine building from a file). */
const LOCATED_CODES: ReadonlySet<string> = new Set<YamlValidationCode>([
  "TOPOLOGY_YAML_SYNTAX",
  "TOPOLOGY_INVALID",
  "COMPONENT_UNKNOWN_IMPL",
  "COMPONENT_INVALID_PARAMS",
]);

/**
 * The located issues (`file:line:col: path: message`) of a topology validation error, or
 * undefined for any other error: what `kb topology validate`, `kb run` and the playground print
 * one per line.
 *
 * Checked by shape, not with `instanceof YamlValidationError`: the built `@kb/topology` and
 * `@kb/topology/node` entries each carry their own copy of that class, so an error thrown by
 * `loadTopologyFile` is not an instance of the class exported by `@kb/topology`. `KbError` comes
 * from the one `@kb/errors` module and is safe to test. A `ComponentParamsError` has `issues`
 * too, by node id and not located: not these.
 */
export function locatedIssuesOf(error: unknown): readonly LocatedIssue[] | undefined {
  if (!isKbError(error) || !LOCATED_CODES.has(error.code)) return undefined;
  const issues = (error as { issues?: unknown }).issues;
  if (!Array.isArray(issues) || issues.length === 0 || !issues.every(isLocated)) return undefined;
  return issues as readonly LocatedIssue[];
}

function isLocated(issue: unknown): boolean {
  const located = issue as Partial<LocatedIssue> | null;
  return located !== null && typeof located.file === "string" && typeof located.line === "number";
}
