// Helpers of this package's tests (not exported by the package).

/** What `action` throws; fails the test when it returns. */
export function thrownBy(action: () => unknown): unknown {
  try {
    action();
  } catch (error) {
    return error;
  }
  throw new Error("expected a throw");
}
