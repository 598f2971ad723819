// Helpers shared by the package's tests (not exported from the package).
import { KbError, type KbErrorCode } from "@kb/errors";
import { expect } from "vitest";

/** Runs `fn` and returns what it throws; fails the test if it returns normally. */
export function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error("expected the call to throw");
}

/** Runs `fn`, expects a KbError with `code` and returns it. */
export function kbError(fn: () => unknown, code: KbErrorCode): KbError {
  const error = thrown(fn);
  expect(error).toBeInstanceOf(KbError);
  expect((error as KbError).code).toBe(code);
  return error as KbError;
}
