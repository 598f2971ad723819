export type { KbErrorCode, KbErrorContext, KbErrorOptions } from "./kb-error.js";
export { formatContext, formatSimTime, groupDigits, isKbError, KbError } from "./kb-error.js";
