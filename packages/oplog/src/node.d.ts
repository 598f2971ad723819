import type { OpLogSink } from "./logger.js";
import type { OpRecord } from "./schema.js";
export type { SpillFileOptions } from "./node/spill-file.js";
export { SpillFile } from "./node/spill-file.js";
export type { SpillSinkOptions } from "./node/spill-sink.js";
export { SpillSink } from "./node/spill-sink.js";
/** Options of {@link JsonlSink}. */
export interface JsonlSinkOptions {
    /** Buffered characters (about bytes) before a write to the file. Default 1 MiB (1 048 576). */
    readonly chunkBytes?: number;
}
/**
 * A sink that streams records to a JSONL file, one JSON object per line (keys in the fixed order
 * of `opRecordToJson`, so identical runs give byte-identical files), with bounded memory: lines
 * are buffered and written when the buffer exceeds `chunkBytes`, and on close.
 *
 * It writes to `<path>.tmp-<pid>` beside the target and renames it to `path` on {@link close},
 * so a run that is interrupted never leaves a half-written file at `path`; {@link abort} removes
 * the temporary file. Node only (`@kb/oplog/node`).
 */
export declare class JsonlSink implements OpLogSink {
    /** The file the log ends up in (after {@link close}). */
    readonly path: string;
    /** The temporary file written until {@link close}: `<path>.tmp-<pid>`. */
    readonly tempPath: string;
    private readonly chunkBytes;
    private fd;
    private chunk;
    private lines;
    private state;
    /** Creates (truncates) the temporary file; `OPLOG_MISUSE` if it cannot be created. */
    constructor(path: string, options?: JsonlSinkOptions);
    /** Records written so far. */
    get recordCount(): number;
    /**
     * Appends one line; `OPLOG_MISUSE` after {@link close} or {@link abort}, `OUTPUT_UNWRITABLE`
     * when a buffered chunk cannot be written (the caller aborts).
     */
    write(record: OpRecord): void;
    /**
     * Writes what is buffered, closes the file and renames it to {@link path}. A second call does
     * nothing; after {@link abort} it is `OPLOG_MISUSE`.
     */
    close(): void;
    /** Discards the log: closes and removes the temporary file; `path` is left untouched. */
    abort(): void;
    /** Writes the buffer; `OUTPUT_UNWRITABLE` naming the file when the disk refuses (ENOSPC, EIO). */
    private flushChunk;
}
/**
 * The largest op log {@link readOpLog} reads whole: 256 MiB, about a million records. An op log
 * is larger than any other input (one line per op of a run), but one string of it must stay
 * under V8's string limit (about 512 MiB) and its records in memory; longer logs are streamed
 * with {@link streamOpLog}, which has no cap.
 */
export declare const OPLOG_READ_MAX_BYTES: number;
/**
 * Reads a whole op-log JSONL file into an array, validating every line (see `parseOpLogJsonl`:
 * `OPLOG_INVALID` naming `file:line`). `OPLOG_MISUSE` if the file cannot be read, is not a
 * regular file (a FIFO, a device) or is above {@link OPLOG_READ_MAX_BYTES}. For files too big
 * for one string, use {@link streamOpLog}.
 */
export declare function readOpLog(path: string): OpRecord[];
/**
 * Streams the records of an op-log JSONL file line by line (readline), validating each as
 * {@link readOpLog} does, with memory bounded by one line. Errors surface from the iteration:
 * `OPLOG_MISUSE` if the file cannot be read or is not a regular file, `OPLOG_INVALID` at the
 * first bad line.
 */
export declare function streamOpLog(path: string): AsyncGenerator<OpRecord, void, undefined>;
