import { constants, type Stats } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import { createGunzip } from "node:zlib";
import { formatByteCount, formatExactBytes, KbError } from "@kb/errors";
import { fileKindOf } from "@kb/errors/node";

// How kb web reads a file it is given (results, traces, a sweep's table, a cached run): only a
// regular file (a FIFO would block for ever, /dev/zero never ends), of at most a size on disk and
// decompressed (a 2 MB gzip can inflate to gigabytes), as chunks: no string of the whole file.

/** The default of `kb web --max-input-size`: the most kb web reads of one file, on disk and decompressed. */
export const DEFAULT_MAX_INPUT_BYTES = 4 * 1024 ** 3;

/** The option that raises {@link DEFAULT_MAX_INPUT_BYTES}, as messages name it. */
export const MAX_INPUT_OPTION = "--max-input-size";

/**
 * The bytes of `file`, gunzipped when it starts with gzip's magic bytes 0x1f 0x8b (whatever its
 * name), in chunks.
 *
 * Throws a `KbError` naming the file when it is not a regular file (opened without blocking, so a
 * FIFO is refused, not waited on), is larger than `maxBytes` on disk, decompresses to more than
 * `maxBytes`, does not decompress, or cannot be read.
 */
export async function* inputChunks(file: string, maxBytes: number): AsyncGenerator<Buffer> {
  const handle = await openRegular(file);
  let raw: ReturnType<FileHandle["createReadStream"]>;
  let stream: NodeJS.ReadableStream & { destroy(): void };
  let gzip: boolean;
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) throw notRegular(file, stats);
    if (stats.size > maxBytes) {
      throw new KbError(
        "CLI_USAGE",
        `a file of ${formatByteCount(stats.size)}, more than kb web reads of one file (${formatByteCount(maxBytes)}). To read it, pass ${MAX_INPUT_OPTION} with a larger size, such as ${MAX_INPUT_OPTION} ${formatExactBytes(2 ** Math.ceil(Math.log2(stats.size))).replace(" ", "")}.`,
        { context: { file } },
      );
    }
    const head = Buffer.alloc(2);
    const { bytesRead } = await handle.read(head, 0, 2, 0);
    gzip = bytesRead === 2 && head[0] === 0x1f && head[1] === 0x8b;
    raw = handle.createReadStream({ start: 0 });
    stream = raw;
    if (gzip) {
      const gunzip = createGunzip();
      raw.on("error", (error) => gunzip.destroy(error));
      stream = raw.pipe(gunzip);
    }
  } catch (error) {
    await handle.close();
    throw readError(file, error);
  }
  let total = 0;
  try {
    for await (const chunk of stream) {
      total += (chunk as Buffer).length;
      if (total > maxBytes) {
        throw new KbError(
          "CLI_USAGE",
          gzip
            ? `more than ${formatByteCount(maxBytes)} once decompressed, the most kb web reads of one file: a gzip bomb, or a larger trace than the default? To read it, pass ${MAX_INPUT_OPTION} with a larger size.`
            : `more than ${formatByteCount(maxBytes)} read (the file grows as it is read?), the most kb web reads of one file. To read it, pass ${MAX_INPUT_OPTION} with a larger size.`,
          { context: { file } },
        );
      }
      yield chunk as Buffer;
    }
  } catch (error) {
    throw readError(file, error);
  } finally {
    stream.destroy();
    raw.destroy();
  }
}

/** A line of a file read by {@link inputLines}. */
export interface InputLine {
  /** The line's text, without its newline. */
  readonly text: string;
  /** 1-based. */
  readonly line: number;
  /** Whether it is the file's last line and has no newline (a write cut short, for a JSONL file). */
  readonly unterminated: boolean;
}

/**
 * The lines of `file` as {@link inputChunks} reads it. Throws a `KbError` at `file:line` for a
 * line longer than `maxLineBytes`, and what {@link inputChunks} throws.
 */
export async function* inputLines(
  file: string,
  maxBytes: number,
  maxLineBytes: number,
): AsyncGenerator<InputLine> {
  let pieces: Buffer[] = [];
  let pending = 0;
  let line = 1;
  for await (const chunk of inputChunks(file, maxBytes)) {
    let from = 0;
    for (let end = chunk.indexOf(0x0a); end >= 0; end = chunk.indexOf(0x0a, from)) {
      if (pending + end - from > maxLineBytes) throw longLine(file, line, maxLineBytes);
      pieces.push(chunk.subarray(from, end));
      yield { text: Buffer.concat(pieces).toString("utf8"), line: line++, unterminated: false };
      pieces = [];
      pending = 0;
      from = end + 1;
    }
    pending += chunk.length - from;
    if (pending > maxLineBytes) throw longLine(file, line, maxLineBytes);
    if (from < chunk.length) pieces.push(chunk.subarray(from));
  }
  if (pending > 0) yield { text: Buffer.concat(pieces).toString("utf8"), line, unterminated: true };
}

function longLine(file: string, line: number, maxLineBytes: number): KbError {
  return new KbError(
    "CLI_USAGE",
    `a line longer than ${formatByteCount(maxLineBytes)}, the most kb web reads of one line: not a file kb wrote (one JSON record per line).`,
    { context: { file, line } },
  );
}

/** `file` opened for reading, without waiting for a writer when it is a FIFO. */
async function openRegular(file: string): Promise<FileHandle> {
  try {
    return await open(file, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  } catch (error) {
    throw readError(file, error);
  }
}

/** A file that is not a regular file, as kb web refuses it. */
function notRegular(file: string, stats: Stats): KbError {
  return new KbError(
    "CLI_USAGE",
    `${fileKindOf(stats)}: kb web reads only regular files (results, traces, a sweep's results.jsonl). Save what you want shown to a file and give kb web that file.`,
    { context: { file } },
  );
}

/** A read or decompression error as kb web reports it. */
function readError(file: string, error: unknown): KbError {
  if (error instanceof KbError) return error;
  const code = (error as NodeJS.ErrnoException).code ?? "";
  const message = (error as Error).message;
  if (code.startsWith("Z_") || /unexpected end of file|incorrect header check|invalid/i.test(message)) {
    return new KbError(
      "CLI_USAGE",
      `a gzip file that does not decompress (${message}): truncated or damaged? Write it again with kb run --trace.`,
      { context: { file }, cause: error },
    );
  }
  return new KbError("CLI_USAGE", `cannot read the file: ${message}`, { context: { file }, cause: error });
}
