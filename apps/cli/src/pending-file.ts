import { closeSync, createWriteStream, openSync, rmSync } from "node:fs";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createGzip } from "node:zlib";
import type * as components from "@kb/components";
import { KbError } from "@kb/errors";

// The trace file of `kb run`, streamed into a temporary file of RunOutputs.

/** Whether a trace path asks for a gzip-compressed trace (`.gz`, as in `run.trace.json.gz`). */
export function isGzipPath(path: string): boolean {
  return /\.gz$/i.test(path);
}

/**
 * A file streamed in chunks: created at once at `path` (a temporary file of {@link RunOutputs},
 * so a bad directory fails before the run), filled and closed by {@link write}, or removed by
 * {@link discard}. With `gzip`, the chunks are gzip-compressed as they stream (node:zlib), so
 * neither the text nor the compressed file is ever held whole. Renaming it into place is the
 * caller's.
 */
export class PendingFile {
  readonly path: string;
  readonly gzip: boolean;
  private fd: number | null;

  constructor(path: string, what: string, options: { gzip?: boolean } = {}) {
    this.path = path;
    this.gzip = options.gzip === true;
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
  async write(chunks: Iterable<string>): Promise<void> {
    const fd = this.fd;
    if (fd === null) return;
    // The stream owns the descriptor from here and closes it, also on failure.
    this.fd = null;
    const file = createWriteStream(this.path, { fd, highWaterMark: 1 << 20 });
    const text = Readable.from(chunks, { objectMode: false });
    try {
      if (this.gzip) await pipeline(text, createGzip(), file);
      else await pipeline(text, file);
    } catch (error) {
      rmSync(this.path, { force: true });
      throw error;
    }
  }

  /** Closes and removes the file (unless {@link write} has it). */
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
 * trace of millions of events never becomes one string, nor one array (the events are generated
 * as the chunks are read).
 */
export function* chromeTraceChunks(
  recorder: components.TraceRecorder,
  filter: components.TraceFilter | undefined,
): Generator<string> {
  const { traceEvents, ...rest } = recorder.toChromeTraceStream("kernbench-ts", filter);
  let chunk = '{"traceEvents":[';
  let first = true;
  for (const event of traceEvents) {
    chunk += `${first ? "" : ","}\n${JSON.stringify(event)}`;
    first = false;
    if (chunk.length >= 1 << 20) {
      yield chunk;
      chunk = "";
    }
  }
  // `{"displayTimeUnit":...}` without its opening brace closes the document.
  yield `${chunk}\n],${JSON.stringify(rest).slice(1)}\n`;
}
