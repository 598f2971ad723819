import { closeSync, openSync, rmSync, writeSync } from "node:fs";
import type * as components from "@kb/components";
import { KbError } from "@kb/errors";

// The trace file of `kb run`, streamed into a temporary file of RunOutputs.

/**
 * A file streamed in chunks: created at once at `path` (a temporary file of {@link RunOutputs},
 * so a bad directory fails before the run), filled and closed by {@link write}, or removed by
 * {@link discard}. Renaming it into place is the caller's.
 */
export class PendingFile {
  readonly path: string;
  private fd: number | null;

  constructor(path: string, what: string) {
    this.path = path;
    try {
      this.fd = openSync(path, "w");
    } catch (error) {
      throw new KbError(
        "CLI_USAGE",
        `cannot create the ${what} file ${path}: ${(error as Error).message}. Check that the directory exists and is writable.`,
        { context: { file: path }, cause: error },
      );
    }
  }

  /** Writes the chunks and closes the file (removed again when a write fails). */
  write(chunks: Iterable<string>): void {
    const fd = this.fd;
    if (fd === null) return;
    try {
      for (const chunk of chunks) {
        const bytes = Buffer.from(chunk, "utf8");
        let offset = 0;
        while (offset < bytes.length) offset += writeSync(fd, bytes, offset, bytes.length - offset);
      }
    } catch (error) {
      this.discard();
      throw error;
    }
    this.fd = null;
    closeSync(fd);
  }

  /** Closes and removes the file. */
  discard(): void {
    if (this.fd === null) return;
    const fd = this.fd;
    this.fd = null;
    try {
      closeSync(fd);
    } finally {
      rmSync(this.path, { force: true });
    }
  }
}

/**
 * The Chrome trace of a recorder as JSON text in chunks of about 1 MiB, one event per line: a
 * trace of millions of events never becomes one string.
 */
export function* chromeTraceChunks(
  recorder: components.TraceRecorder,
  filter: components.TraceFilter | undefined,
): Generator<string> {
  const { traceEvents, ...rest } = recorder.toChromeTrace("kernbench-ts", filter);
  let chunk = '{"traceEvents":[';
  for (let index = 0; index < traceEvents.length; index++) {
    chunk += `${index === 0 ? "" : ","}\n${JSON.stringify(traceEvents[index])}`;
    if (chunk.length >= 1 << 20) {
      yield chunk;
      chunk = "";
    }
  }
  // `{"displayTimeUnit":...}` without its opening brace closes the document.
  yield `${chunk}\n],${JSON.stringify(rest).slice(1)}\n`;
}
