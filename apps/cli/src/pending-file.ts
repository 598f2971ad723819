import { closeSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
import type * as components from "@kb/components";
import { KbError } from "@kb/errors";

// The output files of `kb run` (--trace), written completely or not at all.

/**
 * A file written completely or not at all: `<path>.tmp-<pid>` is created at once (so a bad
 * directory fails before the run), filled and renamed to `path` by {@link commit}, or removed by
 * {@link discard}.
 */
export class PendingFile {
  readonly path: string;
  private readonly tempPath: string;
  private fd: number | null;

  constructor(path: string, what: string) {
    this.path = path;
    this.tempPath = `${path}.tmp-${process.pid}`;
    try {
      this.fd = openSync(this.tempPath, "w");
    } catch (error) {
      throw new KbError(
        "CLI_USAGE",
        `cannot create the ${what} file ${this.tempPath}: ${(error as Error).message}. Check that the directory exists and is writable.`,
        { context: { file: path }, cause: error },
      );
    }
  }

  /** Writes the chunks, closes the file and renames it to {@link path}. */
  commit(chunks: Iterable<string>): void {
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
    renameSync(this.tempPath, this.path);
  }

  /** Closes and removes the temporary file; `path` is left untouched. */
  discard(): void {
    if (this.fd === null) return;
    const fd = this.fd;
    this.fd = null;
    try {
      closeSync(fd);
    } finally {
      rmSync(this.tempPath, { force: true });
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
