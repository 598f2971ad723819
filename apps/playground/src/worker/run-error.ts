import { isKbError } from "@kb/errors";
import { formatIssue, type LocatedIssue, locatedIssuesOf } from "@kb/topology";
import type { RunErrorMessage, RunRequest, SourceLocation } from "../protocol.js";
import { SourceError } from "./virtual-modules.js";

// A failed run as the page shows it: the code, the message `kb run` prints, and the place in the
// playground's files (the kernel's line for KERNEL_FAILED, the topology's line for its errors).

/** `    at fn (file:line:col)` or `    at file:line:col` (V8's frame format). */
const FRAME = /^\s*at (?:.+? \()?(.+?):(\d+):(\d+)\)?$/;

/** The error message of `error`, thrown by the run of `request`. */
export function runErrorMessage(request: RunRequest, error: unknown): RunErrorMessage {
  const { id } = request;
  const known = (file: string): boolean => file in request.files || file === request.topology.name;
  if (error instanceof SourceError) {
    return { type: "error", id, code: "TRANSPILE", message: error.message, location: error.location };
  }
  if (isKbError(error)) {
    const issues = locatedIssuesOf(error);
    if (issues !== undefined) {
      const first = issues[0] as LocatedIssue;
      return {
        type: "error",
        id,
        code: error.code,
        message: issues.map(formatIssue).join("\n"),
        location: { file: first.file, line: first.line, column: first.col },
      };
    }
    const { file, line, col } = error.context;
    const location =
      file !== undefined && line !== undefined && known(file)
        ? { file, line, column: col ?? 1 }
        : stackLocation(error, known);
    return { type: "error", id, code: error.code, message: error.message, location };
  }
  const stack = error instanceof Error ? (error.stack ?? `${error.name}: ${error.message}`) : String(error);
  return {
    type: "error",
    id,
    code: "INTERNAL",
    message: `internal error: ${stack}\nThis is a bug in kb, not in your input. Please report it with the bench and topology you ran.`,
    location: stackLocation(error, known),
  };
}

/**
 * The top frame in one of the playground's files of the innermost error of `error`'s cause chain
 * that has one: where the bench's own code threw (a kernel's `throw`, a host program's bad call),
 * rather than where kb wrapped it.
 */
function stackLocation(error: unknown, known: (file: string) => boolean): SourceLocation | null {
  const chain: Error[] = [];
  for (let at: unknown = error; at instanceof Error && chain.length < 8; at = at.cause) chain.push(at);
  for (const link of chain.reverse()) {
    for (const line of (link.stack ?? "").split("\n")) {
      const match = FRAME.exec(line);
      if (match !== null && known(match[1] as string)) {
        return { file: match[1] as string, line: Number(match[2]), column: Number(match[3]) };
      }
    }
  }
  return null;
}
