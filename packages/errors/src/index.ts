export {
  formatByteCount,
  formatExactBytes,
  formatFixed,
  formatNs,
  formatNumber,
  formatPercent,
  formatQuantity,
  formatRatio,
  formatSi,
  formatSimTime,
  groupDigits,
  withoutFloatNoise,
} from "./format.js";
export type { KbErrorCode, KbErrorContext, KbErrorOptions } from "./kb-error.js";
export { formatContext, isKbError, KbError } from "./kb-error.js";
export type { FormatSchemaIssuesOptions, SchemaIssue } from "./zod-issues.js";
export { closest, formatIssuePath, formatSchemaIssues, schemaIssueText } from "./zod-issues.js";
