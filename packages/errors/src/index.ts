export type { KbErrorCode, KbErrorContext, KbErrorOptions } from "./kb-error.js";
export { formatContext, isKbError, KbError } from "./kb-error.js";
