import { formatIssuePath, isKbError } from "@kb/errors";
import { type LocatedIssue, locateYamlPath } from "./yaml-validate.js";

/**
 * The error `expandTopology` throws about one override of a topology text, located by the path it
 * carries (`KbError.path`, `["overrides", i, ...]`): an override that matches no node at its
 * `match:` value, one that sets an HBM geometry key at that param's value. The message is the
 * error's detail without the path it starts with. Undefined for any other error. `kb topology
 * validate`, `kb run` and the playground's editor report it as `file:line:col: path: message`.
 */
export function overrideIssue(error: unknown, text: string, file: string): LocatedIssue | undefined {
  if (!isKbError(error, "TOPOLOGY_INVALID")) return undefined;
  const path = error.path;
  if (path === undefined || path[0] !== "overrides" || typeof path[1] !== "number") return undefined;
  const { line, col } = locateYamlPath(text, path);
  const written = formatIssuePath(path);
  const message = error.detail.startsWith(`${written}: `)
    ? error.detail.slice(written.length + 2)
    : error.detail;
  return { file, line, col, path: written, message };
}
