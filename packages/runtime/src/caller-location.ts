/** A stack frame's location: `(file:line:col)` at the end of a V8 frame line. */
const FRAME_LOCATION = /\(?([^()\s]+):(\d+):(\d+)\)?$/;
const TEST_FILE = /\.(test|spec)\.[cm]?[jt]sx?$/;

/**
 * The caller's `file:line:col`: the first stack frame outside the `@kb` packages (relative to
 * the working directory when inside it), or null when the stack says nothing usable. The `@kb`
 * packages are the directory two levels above this file (`packages/` of the repository, or
 * `node_modules/@kb/` of an install), except test files, plus anything under `node_modules/@kb/`
 * and Node's own `node:` frames. Reads a stack trace: for `free`, never for a hot path.
 *
 * **Gotchas**: the packages directory is found from this file's own path, so it must stay directly
 * in `src/` (a bundle keeps it one level below the package, in `dist/`).
 */
export function callerLocation(): string | null {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 64;
  const stack = new Error().stack ?? "";
  Error.stackTraceLimit = limit;
  const frames: { file: string; line: string; col: string }[] = [];
  for (const text of stack.split("\n").slice(1)) {
    const match = FRAME_LOCATION.exec(text.trim());
    if (match !== null)
      frames.push({ file: match[1] as string, line: match[2] as string, col: match[3] as string });
  }
  const own = frames[0];
  if (own === undefined) return null;
  const ownPath = own.file.replaceAll("\\", "/");
  const packages = ownPath.split("/").slice(0, -3).join("/");
  for (const frame of frames.slice(1)) {
    const path = frame.file.replaceAll("\\", "/");
    const internal =
      path.startsWith("node:") ||
      path.includes("/node_modules/@kb/") ||
      (packages !== "" && path.startsWith(`${packages}/`) && !TEST_FILE.test(path));
    if (!internal) return `${relativeToCwd(path)}:${frame.line}:${frame.col}`;
  }
  return null;
}

function relativeToCwd(path: string): string {
  const file = path.startsWith("file://") ? decodeURIComponent(path.slice("file://".length)) : path;
  const cwd = globalThis.process?.cwd?.().replaceAll("\\", "/");
  return cwd !== undefined && file.startsWith(`${cwd}/`) ? file.slice(cwd.length + 1) : file;
}
