import { isKbError } from "@kb/errors";
import { type LocatedIssue, locateYamlPath } from "./yaml-validate.js";

/**
 * The error `expandTopology` throws about one override of a topology text, located: an override
 * that matches no node (`overrides[i].match: ...`) at its `match:` value, one that sets an HBM
 * geometry key (`overrides[i].params.<key>: ...`) at that param's value. Undefined for any other
 * error. `kb topology validate`, `kb run` and the playground's editor report it as
 * `file:line:col: path: message`.
 */
export function overrideIssue(error: unknown, text: string, file: string): LocatedIssue | undefined {
  if (!isKbError(error, "TOPOLOGY_INVALID")) return undefined;
  const found = /^overrides\[(\d+)\]((?:\.[A-Za-z_$][\w$]*)+): (.*)$/s.exec(error.detail);
  if (found === null) return undefined;
  const index = Number(found[1]);
  const keys = (found[2] as string).slice(1).split(".");
  const { line, col } = locateYamlPath(text, ["overrides", index, ...keys]);
  return { file, line, col, path: `overrides[${index}].${keys.join(".")}`, message: found[3] as string };
}
