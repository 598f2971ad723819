export type { KbErrorCode, KbErrorContext, KbErrorOptions } from "./kb-error.js";
export { formatContext, formatSimTime, isKbError, KbError } from "./kb-error.js";
