import type { OpLogSink } from "../logger.js";
import type { OpRecord } from "../schema.js";
/** Options of {@link SpillSink}. */
export interface SpillSinkOptions {
    /**
     * Records kept in memory; the next one moves them all, and every later one, to a temporary
     * file. Default 131 072 (about 60 MB of records). 0 spills from the first record.
     */
    readonly memoryRecords?: number;
    /** Records per chunk of the file: written together, read back together. Default 4096. */
    readonly chunkRecords?: number;
    /** Where the temporary file is created. Default `os.tmpdir()`. */
    readonly directory?: string;
}
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
export declare class SpillSink implements OpLogSink {
    private readonly memoryRecords;
    private readonly chunkRecords;
    private readonly directory;
    private held;
    private lines;
    private file;
    private readonly chunks;
    private count;
    private state;
    constructor(options?: SpillSinkOptions);
    /** Records written so far. */
    get recordCount(): number;
    /** True once the records went to the temporary file. */
    get spilled(): boolean;
    /** Bytes in the temporary file (0 while nothing was spilled). */
    get spilledBytes(): number;
    /** Takes the next record; `OPLOG_MISUSE` after {@link close} or {@link dispose}. */
    write(record: OpRecord): void;
    /** Marks the log complete (writing the last chunk); {@link records} may be read from now on. */
    close(): void;
    /** Discards the log and removes the temporary file (a run that failed). */
    abort(): void;
    /** Removes the temporary file and forgets every record; later calls of {@link records} throw. */
    dispose(): void;
    /**
     * The records in id order, after {@link close}: the ones in memory, or the file's, parsed one
     * chunk at a time as the iteration reaches it. May be iterated more than once.
     *
     * Throws `OPLOG_MISUSE` before {@link close} (the last records are not written yet) and after
     * {@link dispose}.
     */
    records(): Generator<OpRecord, void, undefined>;
    private append;
    private flush;
    private readable;
}
