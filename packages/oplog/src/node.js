import { closeSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
import { createInterface } from "node:readline";
import { isKbError, KbError } from "@kb/errors";
import { readUserText, userFileHandle } from "@kb/errors/node";
import { OpLogJsonlParser, opRecordToJson, parseOpLogJsonl } from "./jsonl.js";
export { SpillFile } from "./node/spill-file.js";
export { SpillSink } from "./node/spill-sink.js";
const DEFAULT_CHUNK = 1 << 20;
/**
 * A sink that streams records to a JSONL file, one JSON object per line (keys in the fixed order
 * of `opRecordToJson`, so identical runs give byte-identical files), with bounded memory: lines
 * are buffered and written when the buffer exceeds `chunkBytes`, and on close.
 *
 * It writes to `<path>.tmp-<pid>` beside the target and renames it to `path` on {@link close},
 * so a run that is interrupted never leaves a half-written file at `path`; {@link abort} removes
 * the temporary file. Node only (`@kb/oplog/node`).
 */
export class JsonlSink {
    /** Creates (truncates) the temporary file; `OPLOG_MISUSE` if it cannot be created. */
    constructor(path, options = {}) {
        this.chunk = "";
        this.lines = 0;
        this.state = "open";
        this.path = path;
        this.tempPath = `${path}.tmp-${process.pid}`;
        this.chunkBytes = options.chunkBytes ?? DEFAULT_CHUNK;
        try {
            this.fd = openSync(this.tempPath, "w");
        }
        catch (error) {
            throw new KbError("OPLOG_MISUSE", `cannot create the op log file ${this.tempPath}: ${error.message}. Check that the directory exists and is writable.`, { context: { file: path }, cause: error });
        }
    }
    /** Records written so far. */
    get recordCount() {
        return this.lines;
    }
    /**
     * Appends one line; `OPLOG_MISUSE` after {@link close} or {@link abort}, `OUTPUT_UNWRITABLE`
     * when a buffered chunk cannot be written (the caller aborts).
     */
    write(record) {
        if (this.state !== "open") {
            throw new KbError("OPLOG_MISUSE", `write of record ${record.id} after the JsonlSink was ${this.state}; nothing can be appended after close() or abort().`, { context: { file: this.path } });
        }
        this.chunk += `${opRecordToJson(record)}\n`;
        this.lines++;
        if (this.chunk.length >= this.chunkBytes)
            this.flushChunk();
    }
    /**
     * Writes what is buffered, closes the file and renames it to {@link path}. A second call does
     * nothing; after {@link abort} it is `OPLOG_MISUSE`.
     */
    close() {
        if (this.state === "closed")
            return;
        if (this.state === "aborted") {
            throw new KbError("OPLOG_MISUSE", "close() of a JsonlSink after abort(): the log was discarded.", {
                context: { file: this.path },
            });
        }
        try {
            this.flushChunk();
        }
        catch (error) {
            this.abort();
            throw error;
        }
        this.state = "closed";
        closeSync(this.fd);
        renameSync(this.tempPath, this.path);
    }
    /** Discards the log: closes and removes the temporary file; `path` is left untouched. */
    abort() {
        if (this.state !== "open")
            return;
        this.state = "aborted";
        this.chunk = "";
        try {
            closeSync(this.fd);
        }
        finally {
            rmSync(this.tempPath, { force: true });
        }
    }
    /** Writes the buffer; `OUTPUT_UNWRITABLE` naming the file when the disk refuses (ENOSPC, EIO). */
    flushChunk() {
        if (this.chunk.length === 0)
            return;
        const bytes = Buffer.from(this.chunk, "utf8");
        this.chunk = "";
        try {
            let offset = 0;
            while (offset < bytes.length)
                offset += writeSync(this.fd, bytes, offset, bytes.length - offset);
        }
        catch (error) {
            throw new KbError("OUTPUT_UNWRITABLE", `cannot write ${this.path}: ${error.message}.`, {
                context: { file: this.path },
                cause: error,
            });
        }
    }
}
/**
 * The largest op log {@link readOpLog} reads whole: 256 MiB, about a million records. An op log
 * is larger than any other input (one line per op of a run), but one string of it must stay
 * under V8's string limit (about 512 MiB) and its records in memory; longer logs are streamed
 * with {@link streamOpLog}, which has no cap.
 */
export const OPLOG_READ_MAX_BYTES = 256 * 2 ** 20;
/**
 * Reads a whole op-log JSONL file into an array, validating every line (see `parseOpLogJsonl`:
 * `OPLOG_INVALID` naming `file:line`). `OPLOG_MISUSE` if the file cannot be read, is not a
 * regular file (a FIFO, a device) or is above {@link OPLOG_READ_MAX_BYTES}. For files too big
 * for one string, use {@link streamOpLog}.
 */
export function readOpLog(path) {
    return parseOpLogJsonl(readUserText(path, opLogFile(OPLOG_READ_MAX_BYTES)), path);
}
/**
 * Streams the records of an op-log JSONL file line by line (readline), validating each as
 * {@link readOpLog} does, with memory bounded by one line. Errors surface from the iteration:
 * `OPLOG_MISUSE` if the file cannot be read or is not a regular file, `OPLOG_INVALID` at the
 * first bad line.
 */
export async function* streamOpLog(path) {
    const handle = await userFileHandle(path, opLogFile(Number.POSITIVE_INFINITY));
    const input = handle.createReadStream({ encoding: "utf8" });
    const lines = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
    const parser = new OpLogJsonlParser(path);
    try {
        for await (const line of lines) {
            const record = parser.parseLine(line);
            if (record !== null)
                yield record;
        }
    }
    catch (error) {
        if (isKbError(error))
            throw error;
        throw new KbError("OPLOG_MISUSE", `cannot read the op log file ${path}: ${error.message}.`, {
            context: { file: path },
            cause: error,
        });
    }
    finally {
        lines.close();
        input.destroy();
    }
}
function opLogFile(maxBytes) {
    return { what: "op log file", maxBytes, code: "OPLOG_MISUSE" };
}
//# sourceMappingURL=node.js.map