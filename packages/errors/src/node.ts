import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import { KbError, type KbErrorCode } from "./kb-error.js";

// `@kb/errors/node`: reading a file a user named (a topology, a sweep spec, a ccl.yaml, an op
// log, a plug-in's package.json) the one way: only a regular file, never more than a cap. A FIFO
// given as a topology blocked `kb` for ever and /dev/zero read until memory ran out.

/** What {@link readUserFile} and {@link userFileHandle} need to know about a file. */
export interface UserFileOptions {
  /** What the file is, for messages: `topology file`, `sweep spec file`, `op log file`. */
  readonly what: string;
  /** The largest file accepted, in bytes (`Infinity` for a file that is streamed). */
  readonly maxBytes: number;
  /** The code of the `KbError` a refusal throws (the caller's: `TOPOLOGY_NOT_FOUND`, ...). */
  readonly code: KbErrorCode;
}

/**
 * Opened without blocking: a FIFO with no writer would block `open` itself. On a regular file
 * O_NONBLOCK changes nothing; anything else is refused after `fstat`, before the first read.
 */
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);

/**
 * The bytes of the file a user named. Refuses, with a `KbError` of `options.code` naming the
 * file: what cannot be opened (missing, no permission), what is not a regular file (a FIFO, a
 * device such as /dev/zero, a directory, a socket), and a file above `options.maxBytes` (saying
 * its size and the cap). Checked on the open descriptor, so a file swapped after the check is
 * still the file checked; a file that grows while it is read is refused at the cap.
 */
export function readUserFile(path: string, options: UserFileOptions): Buffer {
  let fd: number;
  try {
    fd = openSync(path, OPEN_FLAGS);
  } catch (error) {
    throw cannotRead(path, options, error);
  }
  try {
    const size = checkStats(path, fstatSync(fd), options);
    // One byte past the size seen: a file that grew past the cap is caught without reading on.
    const buffer = Buffer.alloc(Math.min(size, options.maxBytes) + 1);
    let length = 0;
    while (length < buffer.length) {
      const read = readSync(fd, buffer, length, buffer.length - length, null);
      if (read === 0) break;
      length += read;
    }
    if (length > options.maxBytes) throw tooBig(path, length, options);
    return buffer.subarray(0, length);
  } catch (error) {
    if (error instanceof KbError) throw error;
    throw cannotRead(path, options, error);
  } finally {
    closeSync(fd);
  }
}

/** {@link readUserFile} as UTF-8 text. */
export function readUserText(path: string, options: UserFileOptions): string {
  return readUserFile(path, options).toString("utf8");
}

/**
 * An open handle of the file a user named, for streaming it (an op log): refused as
 * {@link readUserFile} refuses, checked on the handle before the first read. The caller closes it.
 */
export async function userFileHandle(path: string, options: UserFileOptions): Promise<FileHandle> {
  let handle: FileHandle;
  try {
    handle = await open(path, OPEN_FLAGS);
  } catch (error) {
    throw cannotRead(path, options, error);
  }
  try {
    checkStats(path, await handle.stat(), options);
    return handle;
  } catch (error) {
    await handle.close();
    throw error instanceof KbError ? error : cannotRead(path, options, error);
  }
}

/** The size of a regular file within the cap; else the refusal. */
function checkStats(path: string, stats: Stats, options: UserFileOptions): number {
  if (!stats.isFile()) {
    throw new KbError(
      options.code,
      `the ${options.what} ${path} is ${fileKindOf(stats)}, not a regular file; kb reads a ${options.what} only from a regular file (a pipe or a device may block or never end). Save it to a file and name that.`,
      { context: { file: path } },
    );
  }
  if (stats.size > options.maxBytes) throw tooBig(path, stats.size, options);
  return stats.size;
}

/**
 * What a file that is not a regular file is, for messages: `a folder`, `a FIFO (named pipe)`,
 * `a character device`, `a block device`, `a socket`.
 */
export function fileKindOf(stats: Stats): string {
  if (stats.isDirectory()) return "a folder";
  if (stats.isFIFO()) return "a FIFO (named pipe)";
  if (stats.isCharacterDevice()) return "a character device";
  if (stats.isBlockDevice()) return "a block device";
  if (stats.isSocket()) return "a socket";
  return "not a file";
}

function tooBig(path: string, size: number, options: UserFileOptions): KbError {
  return new KbError(
    options.code,
    `the ${options.what} ${path} is ${size} bytes; a ${options.what} may have at most ${options.maxBytes} bytes. Check that this is the file you meant.`,
    { context: { file: path } },
  );
}

function cannotRead(path: string, options: UserFileOptions, error: unknown): KbError {
  return new KbError(options.code, `cannot read the ${options.what} ${path}: ${(error as Error).message}`, {
    context: { file: path },
    cause: error,
  });
}
