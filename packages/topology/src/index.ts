export { parseTopology, resolveTopology, topologyJsonSchema, topologyToYaml } from "./load.js";
export type { ComponentSpec, LinkSpec, Topology, TopologyInput } from "./schema.js";
export {
  componentSchema,
  cubeSchema,
  hbmSchema,
  linkPatternSchema,
  linkSchema,
  overrideSchema,
  PE_COMPONENT_NAMES,
  peTemplateSchema,
  sipSchema,
  topologySchema,
} from "./schema.js";
export type { LocatedIssue } from "./yaml-validate.js";
export { closest, formatIssue, validateYaml, YamlValidationError } from "./yaml-validate.js";
