export type { LocatedIssue } from "./yaml-validate.js";
export { closest, formatIssue, validateYaml, YamlValidationError } from "./yaml-validate.js";
