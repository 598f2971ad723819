import { KbError } from "@kb/errors";
import { closest } from "@kb/topology";
import { CallSite } from "./call-site.js";
import { TL_CALL_NAMES, type TLContext } from "./context.js";

/** `tl.expp is not a function` (V8's words for a call of a property that is not a function). */
const NOT_A_FUNCTION = /^(?:.*\.)?tl\.([A-Za-z_$][\w$]*) is not a function$/;

/**
 * The KbError for what a kernel threw, located at the kernel instance: a KbError of a tl call
 * as it is; a misspelt tl op (`tl.expp(x)`, a TypeError) as `TL_INVALID_CALL` naming the nearest
 * op and the line of the call (from the TypeError's stack); anything else as `KERNEL_FAILED`
 * ("the kernel threw: ...") at the tl call in flight, if any.
 */
export function kernelThrew(tl: TLContext, error: unknown): KbError {
  if (error instanceof KbError && error.context.kernel !== undefined) return error;
  const name = error instanceof TypeError ? NOT_A_FUNCTION.exec(error.message)?.[1] : undefined;
  if (name !== undefined && !TL_CALL_NAMES.includes(name)) {
    const nearest = closest(name, TL_CALL_NAMES);
    const guess = nearest === undefined ? "" : `; did you mean tl.${nearest}?`;
    return tl._error(
      "TL_INVALID_CALL",
      `tl.${name} is not a function: tl has no op ${name}${guess} (@kb/tl's README lists its calls).`,
      error,
      new CallSite(name, error as TypeError),
    );
  }
  return tl._error(
    error instanceof KbError ? error.code : "KERNEL_FAILED",
    `the kernel threw: ${error instanceof KbError ? error.detail : error instanceof Error ? error.message : String(error)}`,
    error,
  );
}
