// The HBM geometry keys are defined in @kb/spec (what a controller model receives); re-exported.

/** Re-exported from @kb/errors, where the "did you mean" of every message lives. */
export { closest } from "@kb/errors";
export { HBM_GEOMETRY_KEYS } from "@kb/spec";
export { ADDRESS_LAYOUT, TCM_WINDOW_BYTES } from "./address-layout.js";
export { expandTopology, linkPatternPeers } from "./expand.js";
export { idGlobToRegExp, isIdGlob } from "./glob.js";
export type { TopologyEdge, TopologyNode } from "./graph.js";
export { FORWARDING_KINDS, TopologyGraph } from "./graph.js";
export type { HbmAddressMap, HbmCoordinates, HbmOrganisation } from "./hbm-mapping.js";
export { HBM_MAPPINGS, hbmAddressMap } from "./hbm-mapping.js";
export { parseTopology, resolveTopology, topologyJsonSchema, topologyToYaml } from "./load.js";
export { locatedIssuesOf } from "./located-issues.js";
export type { DeviceAddress, MemorySpace } from "./memory-map.js";
export {
  decodeAddress,
  encodeAddress,
  hbmLocation,
  MEMORY_SPACES,
  tcmAddress,
  tcmLocation,
} from "./memory-map.js";
export type { NocRouting } from "./noc-routing.js";
export { NOC_ROUTINGS } from "./noc-routing.js";
export { overrideIssue } from "./override-issue.js";
export { isPrototypeKey, PROTOTYPE_KEYS, prototypeKeyMessage, prototypeKeyPath } from "./prototype-keys.js";
export type { Route } from "./route.js";
export { idealTransferNs } from "./route.js";
export type { ComponentSpec, LinkSpec, Topology, TopologyInput } from "./schema.js";
export {
  componentSchema,
  cubeSchema,
  hbmOrganisationOf,
  hbmSchema,
  linkPatternSchema,
  linkSchema,
  overrideSchema,
  PE_COMPONENT_NAMES,
  peTemplateSchema,
  sipSchema,
  topologySchema,
} from "./schema.js";
export type { TopologyFinding } from "./topology-limits.js";
export {
  assertTopologyLimits,
  expandedNodeBound,
  TOPOLOGY_LIMITS,
  topologyLimitIssues,
} from "./topology-limits.js";
export { topologyWarnings } from "./topology-warnings.js";
export type { LocatedIssue, YamlPlace, YamlValidationCode } from "./yaml-validate.js";
export {
  describeSchemaIssue,
  formatIssue,
  locateYamlPath,
  validateYaml,
  YamlValidationError,
  yamlLocator,
} from "./yaml-validate.js";
