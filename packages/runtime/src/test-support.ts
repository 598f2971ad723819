import { isKbError, type KbError } from "@kb/errors";

/** The KbError `run` throws; fails the test when it throws nothing or something else. */
export function thrown(run: () => unknown): KbError {
  try {
    run();
  } catch (error) {
    if (isKbError(error)) return error;
    throw error;
  }
  throw new Error("expected a KbError, nothing was thrown");
}

/** The KbError `promise` rejects with; fails the test when it resolves or rejects with something else. */
export async function failure(promise: Promise<unknown>): Promise<KbError> {
  try {
    await promise;
  } catch (error) {
    if (isKbError(error)) return error;
    throw error;
  }
  throw new Error("expected a KbError");
}
