import { KbError } from "@kb/errors";

/**
 * A results folder's file that could not be written (a full disk, no permission, a read-only
 * folder), as a `SWEEP_OUTPUT` error: `cannot write FILE: ENOSPC: no space left on device, write`.
 * It is the sweep's output that failed, never the point being recorded; the rows already in the
 * table stay whole.
 */
export function outputError(file: string, error: unknown): KbError {
  const reason = error instanceof Error ? error.message : String(error);
  return new KbError(
    "SWEEP_OUTPUT",
    `cannot write ${file}: ${reason}. The rows written before stay valid: free the space (or fix the folder) and run the same command again to resume.`,
    { context: { file }, cause: error },
  );
}
