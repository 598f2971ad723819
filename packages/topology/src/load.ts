import { formatSchemaIssues, KbError } from "@kb/errors";
import { stringify } from "yaml";
import * as z from "zod";
import { prototypeKeyMessage, prototypeKeyPath } from "./prototype-keys.js";
import { type Topology, topologySchema } from "./schema.js";
import { validateYaml } from "./yaml-validate.js";

/**
 * Parses and validates a topology from YAML text. `file` names the source in messages.
 * Returns the topology with every default filled in.
 *
 * Throws a `YamlValidationError` (`TOPOLOGY_YAML_SYNTAX` / `TOPOLOGY_INVALID`) listing every
 * problem as `file:line:col: path: message`.
 */
export function parseTopology(text: string, file = "<topology>"): Topology {
  return validateYaml(topologySchema, text, file);
}

/**
 * Validates a topology given as an object (for example built in code). Defaults are filled in;
 * errors are reported like {@link parseTopology}'s, without line numbers (a prototype key
 * anywhere, such as `overrides.0.params.__proto__`, first).
 */
export function resolveTopology(input: unknown, name = "<topology object>"): Topology {
  const prototypeKey = prototypeKeyPath(input);
  if (prototypeKey !== undefined) {
    const key = String(prototypeKey[prototypeKey.length - 1]);
    throw new KbError("TOPOLOGY_INVALID", `${name}: ${prototypeKey.join(".")}: ${prototypeKeyMessage(key)}`, {
      context: { path: prototypeKey },
    });
  }
  const result = topologySchema.safeParse(input);
  if (result.success) return result.data;
  const first = result.error.issues[0];
  throw new KbError(
    "TOPOLOGY_INVALID",
    `${name} is not a valid topology:\n${formatSchemaIssues(result.error.issues).join("\n")}`,
    first === undefined ? {} : { context: { path: first.path as (string | number)[] } },
  );
}

/** The fully resolved topology as YAML (every default written out), for `kb topology show --resolved`. */
export function topologyToYaml(topology: Topology): string {
  return stringify(topology, { lineWidth: 0 });
}

/**
 * The JSON Schema of the topology format (draft 2020-12), generated from the zod schema. Input
 * view: keys with defaults are optional. `topologies/topology.schema.json` is this, checked in CI.
 */
export function topologyJsonSchema(): Record<string, unknown> {
  return {
    ...z.toJSONSchema(topologySchema, { io: "input", unrepresentable: "any" }),
    title: "kernbench-ts topology",
  };
}
