import { KbError } from "@kb/errors";
import { opRecordToJson } from "../jsonl.js";
import { SpillFile } from "./spill-file.js";
const DEFAULT_MEMORY_RECORDS = 131_072;
const DEFAULT_CHUNK_RECORDS = 4096;
const encoder = new TextEncoder();
const decoder = new TextDecoder();
/**
 * A sink for a log that phase 2 replays in the same process (`kb run --verify`): it keeps the
 * records in memory while they are few, and past `memoryRecords` streams them to a temporary
 * {@link SpillFile}, so a long run's log costs disk, not memory. {@link records} gives them back
 * in id order, read a chunk at a time: a replay holds one chunk, and the records it has run can
 * be collected.
 *
 * A record read back is the one written (`opRecordToJson` lines, NaN, ±Infinity and -0 included),
 * with its params as plain objects.
 *
 * **When to use**: instead of `MemorySink` when the log can outgrow memory and is read in order.
 * A caller that needs random access to the records (an index over them) wants `MemorySink`.
 *
 * **Gotchas**: call {@link dispose} when done (or {@link abort} on failure): it closes and
 * removes the file. A file the program forgets is removed when the sink is garbage collected or
 * the process exits, and on Linux and macOS it is never visible in the directory at all.
 */
export class SpillSink {
    constructor(options = {}) {
        this.held = [];
        this.lines = [];
        this.file = null;
        this.chunks = [];
        this.count = 0;
        this.state = "open";
        this.memoryRecords = checkCount("memoryRecords", options.memoryRecords ?? DEFAULT_MEMORY_RECORDS, 0);
        this.chunkRecords = checkCount("chunkRecords", options.chunkRecords ?? DEFAULT_CHUNK_RECORDS, 1);
        this.directory = options.directory;
    }
    /** Records written so far. */
    get recordCount() {
        return this.count;
    }
    /** True once the records went to the temporary file. */
    get spilled() {
        return this.file !== null;
    }
    /** Bytes in the temporary file (0 while nothing was spilled). */
    get spilledBytes() {
        return this.file?.size ?? 0;
    }
    /** Takes the next record; `OPLOG_MISUSE` after {@link close} or {@link dispose}. */
    write(record) {
        if (this.state !== "open") {
            throw new KbError("OPLOG_MISUSE", `write of record ${record.id} after the SpillSink was ${this.state}; nothing can be appended after close().`);
        }
        this.count++;
        if (this.file === null) {
            if (this.held.length < this.memoryRecords) {
                this.held.push(record);
                return;
            }
            this.file = new SpillFile({
                what: "the op log",
                ...(this.directory !== undefined ? { directory: this.directory } : {}),
            });
            const held = this.held;
            this.held = [];
            for (const each of held)
                this.append(each);
        }
        this.append(record);
    }
    /** Marks the log complete (writing the last chunk); {@link records} may be read from now on. */
    close() {
        if (this.state !== "open")
            return;
        this.flush();
        this.state = "closed";
    }
    /** Discards the log and removes the temporary file (a run that failed). */
    abort() {
        this.dispose();
    }
    /** Removes the temporary file and forgets every record; later calls of {@link records} throw. */
    dispose() {
        this.state = "disposed";
        this.held = [];
        this.lines = [];
        this.file?.close();
    }
    /**
     * The records in id order, after {@link close}: the ones in memory, or the file's, parsed one
     * chunk at a time as the iteration reaches it. May be iterated more than once.
     *
     * Throws `OPLOG_MISUSE` before {@link close} (the last records are not written yet) and after
     * {@link dispose}.
     */
    *records() {
        this.readable();
        if (this.file === null) {
            yield* this.held;
            return;
        }
        const file = this.file;
        for (const chunk of this.chunks) {
            this.readable();
            const text = decoder.decode(file.read(chunk.offset, chunk.bytes));
            // The lines joined by commas are a JSON array: a record's JSON never holds a raw newline.
            const records = JSON.parse(`[${text.slice(0, -1).replaceAll("\n", ",")}]`);
            for (const record of records)
                yield decodeFloats(record);
        }
    }
    append(record) {
        this.lines.push(opRecordToJson(record));
        if (this.lines.length >= this.chunkRecords)
            this.flush();
    }
    flush() {
        if (this.file === null || this.lines.length === 0)
            return;
        const bytes = encoder.encode(`${this.lines.join("\n")}\n`);
        this.lines = [];
        this.chunks.push({ offset: this.file.append(bytes), bytes: bytes.length });
    }
    readable() {
        if (this.state === "closed")
            return;
        throw new KbError("OPLOG_MISUSE", this.state === "open"
            ? "records() of a SpillSink before close(): close the logger (OpLogger.close) first, so the last records are written."
            : "records() of a SpillSink after dispose(): its records and temporary file are gone.");
    }
}
/** A float field as the JSONL format spells it (`"NaN"`, `"-0"`, ...) decoded to the number. */
function floatOf(value) {
    switch (value) {
        case "NaN":
            return Number.NaN;
        case "Infinity":
            return Number.POSITIVE_INFINITY;
        case "-Infinity":
            return Number.NEGATIVE_INFINITY;
        case "-0":
            return -0;
        default:
            return value;
    }
}
/** Turns the float texts of math `scalars` and gemm `epilogue` arguments back into numbers. */
function decodeFloats(record) {
    if (record.op_kind === "math") {
        const scalars = record.params.scalars;
        if (scalars?.some((value) => typeof value === "string")) {
            record.params.scalars = scalars.map(floatOf);
        }
    }
    else if (record.op_kind === "gemm") {
        for (const step of record.params.epilogue ?? []) {
            for (const key in step) {
                if (key !== "op" && typeof step[key] === "string") {
                    step[key] = floatOf(step[key]);
                }
            }
        }
    }
    return record;
}
function checkCount(name, value, min) {
    if (!Number.isSafeInteger(value) || value < min) {
        throw new KbError("OPLOG_MISUSE", `SpillSink: ${name} must be an integer >= ${min}, got ${String(value)}.`);
    }
    return value;
}
//# sourceMappingURL=spill-sink.js.map